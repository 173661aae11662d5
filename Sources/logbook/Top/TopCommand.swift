import Foundation
import Glibc
import LogbookClient
import LogbookCommandLine
import LogbookDomain
import LogbookJSON
import LogbookWire

/// `logbook top`: asks every worker in `--commands` and the query process for their
/// `Status` once per interval (all at once, each on its own connection) and shows each
/// process's figures, with rates and means taken between its last two answers
/// (`TopFigures`). On a terminal the screen is redrawn in place; otherwise each refresh is
/// one line per process (`TopView`). A process that does not answer shows as down and
/// top goes on; `--count N` stops after N refreshes.
struct TopCommand: ConfiguredCommand {
    static let interval = OptionSpec.option("interval", "S", "seconds between refreshes (0.1 to 3600)", default: "1")
    static let count = OptionSpec.option("count", "N", "stop after N refreshes", default: "until interrupted")
    /// `logbook status`'s client flags, with top's own defaults: a refresh must not wait long.
    static let timeout = OptionSpec.option(
        "timeout-ms", "N", "wait this long for each answer", default: "the interval, 100 to 5000")
    static let attempts = OptionSpec.option(
        "attempts", "N", "try this many times, on a fresh socket each time", default: "1")

    static let spec = CommandSpec(
        name: "top", usage: "[options]",
        listings: [.init("top", "a live view of the workers' and the query process's figures")],
        section: .clientCommands,
        description: """
            Asks each worker in --commands and the query process for their Status every
            --interval seconds and shows, per process: commands, rejections and events per
            second, the mean batch size, command and commit latency, feed subscribers
            (worker); checkpoint, lag in events and seconds, events applied and queries per
            second, parked queries and any rebuild (query process). Rates are taken between
            two refreshes, so the first shows "-". On a terminal the screen is redrawn;
            otherwise each refresh prints one line per process:
            time=… process=worker|query endpoint=… state=up|down ….
            A process that does not answer shows as down, and top goes on.
            """,
        options: [interval, count, timeout, attempts], settings: Configuration.settings)

    let arguments: Arguments
    let configuration: Configuration
    let output: StandardStreams

    func run() throws(CLIError) -> ExitStatus {
        guard arguments.positionals.isEmpty else { throw .usage("top takes no positional arguments") }
        let seconds = try intervalSeconds()
        let refreshes = try arguments.integer(Self.count, in: 1...Int.max)
        let timeout =
            try arguments.integer(Self.timeout, in: 1...600_000) ?? min(5_000, max(100, Int(seconds * 1000)))
        let attempts = try arguments.integer(Self.attempts, in: 1...100) ?? 1
        let client: LogbookClient
        do {
            client = try LogbookClient(
                endpoints: configuration.endpoints, timeout: .milliseconds(timeout), attempts: attempts,
                security: try configuration.clientKeys())
        } catch let error as CLIError {
            throw error
        } catch {
            throw .unavailable("cannot start the client: \(error)")
        }
        defer { client.close() }
        let onTerminal = isatty(1) == 1
        var previous = TopSamples()
        var done = 0
        while refreshes.map({ done < $0 }) ?? true {
            let started = ContinuousClock.now
            let sample = TopSamples.take(client, queries: configuration.endpoints.queries)
            let rows = sample.rows(since: previous)
            previous = sample
            let time = SystemClock().now().rfc3339
            if onTerminal {
                output.out(bytes: Array(TopView.screen(rows, time: time, intervalSeconds: seconds).utf8))
            } else {
                output.out(TopView.lines(rows, time: time).joined(separator: "\n"))
            }
            done += 1
            if let refreshes, done >= refreshes { break }
            let left = Duration.seconds(seconds) - (ContinuousClock.now - started)
            if left > .zero { Thread.sleep(forTimeInterval: left.inSeconds) }
        }
        return .success
    }

    private func intervalSeconds() throws(CLIError) -> Double {
        guard let text = arguments.value(Self.interval) else { return 1 }
        guard let seconds = Double(text), seconds >= 0.1, seconds <= 3600 else {
            throw .usage("\(Self.interval.flag) '\(text)': expected seconds from 0.1 to 3600")
        }
        return seconds
    }
}

/// One refresh's answers: each worker's and the query process's status (or why none came),
/// and when they were taken.
struct TopSamples {
    var workers: [(endpoint: String, outcome: Result<WorkerStatus, CLIError>)] = []
    var query: (endpoint: String, outcome: Result<QueryStatus, CLIError>)?
    var taken = ContinuousClock.now

    /// Asks every process at once and waits for all the answers.
    static func take(_ client: LogbookClient, queries: String) -> TopSamples {
        let (workers, query) = ClientSession.wait {
            () async -> ([WorkerStatusAnswer], Result<JSONObject, LogbookClientError>) in
            async let workers = client.statusOfEachWorker()
            async let query = Self.queryStatus(client)
            return (await workers, await query)
        }
        var sample = TopSamples()
        sample.taken = ContinuousClock.now
        sample.workers = workers.map { answer in
            (answer.endpoint, Self.read(answer.outcome, as: WorkerStatus.self))
        }
        sample.query = (queries, Self.read(query, as: QueryStatus.self))
        return sample
    }

    /// The rows of this sample, with rates from `previous` where the same process answered both.
    func rows(since previous: TopSamples) -> [TopView.Row] {
        let seconds = (taken - previous.taken).inSeconds
        var rows: [TopView.Row] = []
        for worker in workers {
            switch worker.outcome {
            case .success(let status):
                let before = previous.workers.first { $0.endpoint == worker.endpoint }.flatMap { try? $0.outcome.get() }
                rows.append(
                    .worker(
                        endpoint: worker.endpoint, TopFigures.worker(status, previous: before, seconds: seconds)))
            case .failure(let error):
                rows.append(.down(role: "worker", endpoint: worker.endpoint, reason: error.message))
            }
        }
        if let query {
            switch query.outcome {
            case .success(let status):
                let before = previous.query.flatMap { try? $0.outcome.get() }
                rows.append(
                    .query(endpoint: query.endpoint, TopFigures.query(status, previous: before, seconds: seconds)))
            case .failure(let error):
                rows.append(.down(role: "query", endpoint: query.endpoint, reason: error.message))
            }
        }
        return rows
    }

    private static func queryStatus(_ client: LogbookClient) async -> Result<JSONObject, LogbookClientError> {
        do throws(LogbookClientError) {
            return .success(try await client.status(of: .queries))
        } catch {
            return .failure(error)
        }
    }

    private static func read<Status: StatusDocument>(
        _ outcome: Result<JSONObject, LogbookClientError>, as type: Status.Type
    ) -> Result<Status, CLIError> {
        switch outcome {
        case .success(let result):
            do {
                return .success(try Status(json: .object(result)))
            } catch {
                return .failure(.unavailable("answered Status with something other than its status: \(error)"))
            }
        case .failure(let error):
            return .failure(.unavailable("\(error)"))
        }
    }
}

extension Duration {
    /// The duration in seconds, as a double.
    fileprivate var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
