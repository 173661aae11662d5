import LogbookApplication
import LogbookJSON
import LogbookZMQ

/// `logbook replay`: prints the log from a position as JSON lines, one envelope a line, in
/// position order, read page by page from the worker's log socket (`ReadLog`), for any
/// consumer to rebuild what it derives. Stops at the head as it was when it got there.
struct ReplayCommand {
    static let options = Set(["from", "limit", "topics"]).union(ClientPatience.options)
    static let pageSize = 5_000

    let arguments: Arguments
    let configuration: Configuration
    let output: StandardStreams

    func run() throws(CLIError) -> ExitStatus {
        guard arguments.positionals.isEmpty else { throw .usage("replay takes no positional arguments") }
        var next = Int64(try arguments.integer("from", in: 1...Int.max) ?? 1)
        var remaining = try arguments.integer("limit", in: 1...Int.max) ?? Int.max
        let topics = try arguments.options["topics"].map { words throws(CLIError) in try TopicList.parse([words]) }
        do {
            let context = try ZMQContext()
            let patience = try ClientPatience(arguments)
            var channel = try LogReadChannel(
                context, endpoint: configuration.endpoints.log, timeoutMilliseconds: patience.timeoutMilliseconds)
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
