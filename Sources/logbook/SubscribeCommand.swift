import LogbookApplication
import LogbookClient
import LogbookCommandLine
import LogbookJSON
import LogbookZMQ

/// `logbook subscribe [TOPICS] [--from N] [--limit N]`: prints the change feed as JSON
/// lines (event envelopes, as `replay` prints them), in position order, with no hole and
/// no repeat: it fills whatever the feed dropped from the log before printing anything
/// newer. `--from N` starts at position N (resume with the last position printed + 1);
/// without it, it starts at the log's head.
struct SubscribeCommand: ConfiguredCommand {
    static let from = OptionSpec.option(
        "from", "N", "start at position N; to resume, the last position printed + 1",
        default: "the log's head, i.e. only what happens from now on")
    static let limit = OptionSpec.option("limit", "N", "stop after N events")

    static let spec = CommandSpec(
        name: "subscribe", usage: "[TOPICS] [options]",
        listings: [.init("subscribe [T]", "print the change feed as JSON lines (topics users,posts,products,orders)")],
        section: .clientCommands,
        description: """
            Prints the change feed as JSON lines, one event envelope a line, in position order,
            with no hole and no repeat (what the feed drops is read from the log). TOPICS is a
            comma-separated list of users, posts, products, orders, or all (the default).
            """,
        options: [from, limit] + ClientPatience.options, settings: Configuration.settings)

    let arguments: Arguments
    let configuration: Configuration
    let output: StandardStreams

    func run() throws(CLIError) -> ExitStatus {
        let topics = try TopicList.parse(arguments.positionals)
        let from = try arguments.integer(Self.from, in: 1...Int.max)
        var remaining = try arguments.integer(Self.limit, in: 1...Int.max) ?? Int.max
        let endpoints = configuration.endpoints
        let patience = try ClientPatience(arguments)
        let keys = try configuration.clientKeys()
        do {
            let context = try ZMQContext()
            let start = try from.map { Int64($0) - 1 } ?? Self.head(context, endpoints.log, patience, keys)
            var follower = try FeedFollower(
                context, feed: endpoints.feed, log: endpoints.log, topics: topics, cursor: start,
                logTimeoutMilliseconds: patience.timeoutMilliseconds, security: keys)
            var failures = 0
            while remaining > 0 {
                guard let batch = try Self.nextBatch(&follower, failures: &failures, patience: patience) else {
                    continue
                }
                try output.outEvents(batch.events.prefix(remaining))
                remaining -= min(remaining, batch.events.count)
            }
        } catch let error as CLIError {
            throw error
        } catch {
            throw .unavailable("\(error)")
        }
        return .success
    }

    /// The next batch, or nil after a log read that went unanswered (the worker may be
    /// restarting: the cursor stays and the next call tries again), up to `attempts` in a row.
    private static func nextBatch(_ follower: inout FeedFollower, failures: inout Int, patience: ClientPatience)
        throws(FeedFollowError) -> FeedBatch?
    {
        do {
            let batch = try follower.waitForNext(timeoutMilliseconds: 1_000).batch
            failures = 0
            return batch
        } catch {
            guard case .logUnavailable = error, failures + 1 < patience.attempts else { throw error }
            failures += 1
            return nil
        }
    }

    /// The log's head, asked of the log socket.
    private static func head(
        _ context: ZMQContext, _ endpoint: String, _ patience: ClientPatience, _ keys: CurveClientKeys?
    ) throws -> Int64 {
        var channel = try LogReadChannel(
            context, endpoint: endpoint, timeoutMilliseconds: patience.timeoutMilliseconds, security: keys)
        return try patience.retrying { () throws(FeedFollowError) in try channel.read(from: 1, limit: 1, topics: nil) }
            .head
    }
}
