import LogbookApplication
import LogbookClient
import LogbookCommandLine
import LogbookFeed
import LogbookJSON
import LogbookZMQ

/// `logbook replay`: prints the log from a position as JSON lines, one envelope a line, in
/// position order, read page by page from the worker's log socket (`ReadLog`), for any
/// consumer to rebuild what it derives. Stops at the head as it was when it got there.
struct ReplayCommand: ConfiguredCommand {
    static let from = OptionSpec.option("from", "N", "the first position to print", default: "1")
    static let limit = OptionSpec.option("limit", "N", "print at most N events")
    static let topics = OptionSpec.option(
        "topics", "LIST", "only these topics, comma-separated: users, posts, products, orders")

    static let spec = CommandSpec(
        name: "replay", usage: "[options]",
        listings: [.init("replay", "print the log as JSON lines, one event envelope a line")],
        section: .clientCommands,
        description: """
            Prints the log as JSON lines, one event envelope a line, in position order, read
            from the worker's log socket, up to the head as it is when replay gets there.
            """,
        options: [from, limit, topics] + ClientPatience.options, settings: Configuration.settings)
    static let pageSize = 5_000

    let arguments: Arguments
    let configuration: Configuration
    let output: StandardStreams

    func run() throws(CLIError) -> ExitStatus {
        guard arguments.positionals.isEmpty else { throw .usage("replay takes no positional arguments") }
        var next = Int64(try arguments.integer(Self.from, in: 1...Int.max) ?? 1)
        var remaining = try arguments.integer(Self.limit, in: 1...Int.max) ?? Int.max
        let topics = try arguments.value(Self.topics).map { words throws(CLIError) in try TopicList.parse([words]) }
        let keys = try configuration.clientKeys()
        do {
            let context = try ZMQContext()
            let patience = try ClientPatience(arguments)
            var channel = try LogReadChannel(
                context, endpoint: configuration.endpoints.log, timeoutMilliseconds: patience.timeoutMilliseconds,
                security: keys)
            while remaining > 0 {
                let page = try patience.retrying { () throws(FeedFollowError) in
                    try channel.read(from: next, limit: min(Self.pageSize, remaining), topics: topics)
                }
                try output.outEvents(page.events.prefix(remaining))
                remaining -= min(remaining, page.events.count)
                if page.events.isEmpty || page.next > page.head { break }
                next = page.next
            }
        } catch let error as CLIError {
            throw error
        } catch {
            throw .unavailable("\(error)")
        }
        return .success
    }
}
