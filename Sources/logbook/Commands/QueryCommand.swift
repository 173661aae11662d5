import Foundation
import LogbookClient
import LogbookCommandLine
import LogbookJSON
import LogbookWire

/// `logbook query TYPE [DATA]`: asks the query process and prints its reply as it came.
/// `--min-position N` waits until the read models include position N (read-your-writes).
struct QueryCommand: ConfiguredCommand {
    static let minPosition = OptionSpec.option(
        "min-position", "N", "answer only once the read models include position N")
    static let waitMs = OptionSpec.option(
        "wait-ms", "N", "how long the query process may wait for it", default: "5000")

    static let spec = CommandSpec(
        name: "query", usage: "TYPE [DATA] [options]",
        listings: [.init("query TYPE DATA", #"ask the query process (e.g. GetUser '{"userId":"u1"}')"#)],
        section: .clientCommands,
        description: """
            Asks the query process and prints its reply: {"id","ok":true,"position","result"}.
            Types: GetUser, ListUsers, GetPost, ListPosts, GetProduct, ListProducts, ListOrders.
            """,
        options: [minPosition, waitMs] + ClientPatience.options, settings: Configuration.settings)

    let arguments: Arguments
    let configuration: Configuration
    let output: StandardStreams

    func run() throws(CLIError) -> ExitStatus {
        guard (1...2).contains(arguments.positionals.count) else {
            throw .usage(
                "expected a query type and, optionally, its JSON data, e.g. query GetUser '{\"userId\":\"u1\"}'")
        }
        let document = RequestDocument.query(
            id: UUID().uuidString.lowercased(), type: arguments.positionals[0],
            data: try arguments.positionals.count == 2
                ? JSONArgument.read(arguments.positionals[1], name: "DATA") : .object(JSONObject()),
            minPosition: try arguments.integer(Self.minPosition, in: 0...Int.max),
            timeoutMilliseconds: try arguments.integer(Self.waitMs, in: 1...60_000))
        let session = try ClientSession(arguments: arguments, configuration: configuration)
        let reply = try session.request(.queries, document)
        output.out(JSONWriter.string(.object(reply)))
        return reply.isOK ? .success : .errorReply
    }
}
