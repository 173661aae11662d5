import LogbookBench
import LogbookCommandLine

/// `logbook-bench`'s declaration: every flag it takes, and its help. The defaults shown are
/// read from `BenchOptions.standard`, the values the bench runs with.
extension BenchCommand {
    static let quick = OptionSpec.flag(
        "quick", "small sizes, under a minute (a smoke test; figures are rough)")
    static let out = OptionSpec.option("out", "FILE", "the JSON report", default: standard { $0.outputPath })
    static let store = OptionSpec.option(
        "store", "S",
        "the event log to measure: sqlite (one worker; every section but scale) or postgresql (a throwaway "
            + "PostgreSQL shared by 1, 2, 3 workers and a feed process; the scale section)",
        default: BenchOptions.Store.sqlite.rawValue)
    static let only = OptionSpec.option(
        "only", "LIST",
        "only these sections of --store, comma-separated: "
            + BenchOptions.Section.allCases.map(\.rawValue).joined(separator: ", "))
    static let clients = OptionSpec.option(
        "clients", "LIST", "client counts of the throughput runs; the scale section uses the largest",
        default: standard { $0.clients.map(String.init).joined(separator: ",") })
    static let workers = OptionSpec.option(
        "workers", "LIST", "worker counts of the scale section (--store postgresql)",
        default: standard { $0.workers.map(String.init).joined(separator: ",") })
    static let window = OptionSpec.option(
        "window", "N", "commands each client keeps in flight", default: standard { "\($0.window)" })
    static let threads = OptionSpec.option(
        "threads", "N", "threads the load clients run on", default: standard { "\($0.loadThreads)" })
    static let seconds = OptionSpec.option(
        "seconds", "N", "length of each throughput run and its baselines",
        default: standard { "\(Int($0.secondsPerRun))" })
    static let events = OptionSpec.option(
        "events", "N", "events in the generated log", default: standard { "\($0.logEvents)" })
    static let streams = OptionSpec.option(
        "streams", "N", "streams in the generated log", default: standard { "\($0.logStreams)" })
    static let feedRate = OptionSpec.option(
        "feed-rate", "N", "feed events a second in the feed run",
        default: standard { "\(Int($0.feedEventsPerSecond))" })
    static let samples = OptionSpec.option(
        "samples", "N", "round trips for the one-client latency", default: standard { "\($0.latencySamples)" })
    static let dataDirectory = OptionSpec.option(
        "data-dir", "DIR", "an empty directory to work in, kept afterwards (LOGBOOK_DATA_DIR is ignored)",
        default: "a fresh temporary directory, removed at the end")
    static let logbook = OptionSpec.option(
        "logbook", "PATH", "the logbook executable whose worker and query process are measured",
        default: "logbook beside \(program)")

    static let spec = CommandSpec(
        name: nil, usage: "[options]",
        description: """
            Starts a worker and a query process of the logbook executable beside this one on free
            loopback ports in a scratch directory, measures them, and prints one table: each figure
            beside baselines measured in the same run on this machine (SQLite inserted directly, a
            bare libzmq echo, one fsync, a bare sequential read, Redis and PostgreSQL when installed),
            the ratio figure ÷ baseline and the target. Also writes the table as JSON. Progress goes
            to stderr; the servers' own logs stay in the scratch directory while it runs.
            'logbook bench …' runs this with the same options.
            Sections, in the order they run:
              replay      ReadLog rate, full rebuild and start-up catch-up on a generated log
              throughput  durable commands/s with 1, 8 and 64 pipelined clients
              latency     p50/p99/p99.9 for one client and at half the peak throughput
              feed        reply → feed message and send → feed message, p50/p99
              memory      peak RSS of the worker and the query process
              groups      events/s a consumer group's 1, 2 and 4 members get and ack, beside a
                          raw feed subscriber; the groups process's peak RSS with a group
                          the whole log behind
              curve       commands/s (64 clients) and feed messages/s with CURVE on, beside
                          the same load on the plain service, alternating, in the same run
              privacy     sealing and opening an event's personal values, the command handler
                          and a rebuild's reading on a sealed log, each beside a plain one
              compare     Redis XADD (appendfsync always) and PostgreSQL INSERTs, same load
            With --store postgresql (a throwaway PostgreSQL cluster, its own in this run):
              scale       commands/s of 1, 2, 3 workers sharing it, beside its own committed
                          INSERTs at the same concurrency; processor time per command of every
                          process, commands decided again, the head-row lock's share of wall
                          time, feed latency through run feed, and the capacity model
            """,
        options: [
            quick, out, store, only, clients, workers, window, threads, seconds, events, streams, feedRate, samples,
            dataDirectory,
            logbook,
        ],
        exitStatus: "0 every section ran, 2 bad command line, 3 a section failed or logbook is missing")

    /// A default as help shows it: the full run's value, and the quick run's when it differs.
    private static func standard(_ value: (BenchOptions) -> String) -> String {
        let full = value(.standard(quick: false))
        let quick = value(.standard(quick: true))
        return full == quick ? full : "\(full); quick \(quick)"
    }
}
