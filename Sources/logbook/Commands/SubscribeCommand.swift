import LogbookApplication
import LogbookClient
import LogbookCommandLine
import LogbookFeed
import LogbookJSON
import LogbookZMQ

/// `logbook subscribe [TOPICS] [--from N] [--limit N]`: prints the change feed as JSON
/// lines (event envelopes, as `replay` prints them), in position order, with no hole and
/// no repeat: it fills whatever the feed dropped from the log before printing anything
/// newer. `--from N` starts at position N (resume with the last position printed + 1);
/// without it, it starts at the log's head. It follows until stopped, like `tail -f`: while
/// the worker is down it waits and tries again (`FollowRetry`), unless `--attempts N` bounds
/// how many unanswered reads in a row it bears.
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
            It follows until stopped (or --limit), like tail -f: while the worker is down or
            restarting it says on stderr that it is waiting, tries again with back-off (250 ms
            doubling to 5 s) and goes on where it was. --attempts N gives up instead (exit
            status 3) after N log reads in a row go unanswered.
            """,
        options: [from, limit] + ClientPatience.followingOptions, settings: Configuration.settings)

    let arguments: Arguments
    let configuration: Configuration
    let output: StandardStreams

    func run() throws(CLIError) -> ExitStatus {
        let topics = try TopicList.parse(arguments.positionals)
        let from = try arguments.integer(Self.from, in: 1...Int.max)
        var remaining = try arguments.integer(Self.limit, in: 1...Int.max) ?? Int.max
        let endpoints = configuration.endpoints
        let patience = try ClientPatience(arguments, following: true)
        let keys = try configuration.clientKeys()
        var retry = FollowRetry(attempts: patience.attempts, endpoint: endpoints.log, output: output)
        do {
            let context = try ZMQContext()
            let start = try from.map { Int64($0) - 1 } ?? Self.head(context, endpoints.log, patience, keys, &retry)
            var follower = try FeedFollower(
                context, feed: endpoints.feed, log: endpoints.log, topics: topics, cursor: start,
                logTimeoutMilliseconds: patience.timeoutMilliseconds, security: keys)
            while remaining > 0 {
                guard let batch = try Self.nextBatch(&follower, &retry) else { continue }
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
    /// restarting: the cursor stays, `retry` waits, and the next call tries again).
    private static func nextBatch(_ follower: inout FeedFollower, _ retry: inout FollowRetry)
        throws(FeedFollowError) -> FeedBatch?
    {
        do {
            let batch = try follower.waitForNext(timeoutMilliseconds: 1_000).batch
            retry.succeeded()
            return batch
        } catch {
            guard case .logUnavailable = error else { throw error }
            try retry.failed(error)
            follower.requestCatchUp()
            return nil
        }
    }

    /// The log's head, asked of the log socket (waiting for it as `retry` says).
    private static func head(
        _ context: ZMQContext, _ endpoint: String, _ patience: ClientPatience, _ keys: CurveClientKeys?,
        _ retry: inout FollowRetry
    ) throws -> Int64 {
        var channel = try LogReadChannel(
            context, endpoint: endpoint, timeoutMilliseconds: patience.timeoutMilliseconds, security: keys)
        while true {
            do throws(FeedFollowError) {
                let head = try channel.read(from: 1, limit: 1, topics: nil).head
                retry.succeeded()
                return head
            } catch {
                guard case .logUnavailable = error else { throw error }
                try retry.failed(error)
            }
        }
    }
}
