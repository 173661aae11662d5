import Foundation
import LogbookClient
import LogbookJSON

/// `logbook query TYPE [DATA]`: asks the query process and prints its reply as it came.
/// `--min-position N` waits until the read models include position N (read-your-writes).
struct QueryCommand {
    static let options = Set(["min-position", "wait-ms"]).union(ClientSession.options)

    let arguments: Arguments
    let configuration: Configuration
    let output: StandardStreams

    func run() throws(CLIError) -> ExitStatus {
        guard (1...2).contains(arguments.positionals.count) else {
            throw .usage(
                "expected a query type and, optionally, its JSON data, e.g. query GetUser '{\"userId\":\"u1\"}'")
        }
        var document: JSONObject = [
            "id": .string(UUID().uuidString.lowercased()), "type": .string(arguments.positionals[0]),
            "data": try arguments.positionals.count == 2
                ? JSONArgument.read(arguments.positionals[1], name: "DATA") : .object(JSONObject()),
        ]
        document["minPosition"] = try arguments.integer("min-position", in: 0...Int.max).map(JSONValue.int)
        document["timeoutMs"] = try arguments.integer("wait-ms", in: 1...60_000).map(JSONValue.int)
        let session = try ClientSession(arguments: arguments, configuration: configuration)
        let reply = try session.request(.queries, document)
        output.out(JSONWriter.string(.object(reply)))
        return reply.isOK ? .success : .errorReply
    }
}
