import Foundation
import LogbookClient
import LogbookJSON

/// `logbook send TYPE DATA`: sends one command to the worker and prints its reply exactly
/// as it came: `{"id","ok":true,"position","events"}` or `{"id","ok":false,"error"}`.
/// Exit 0 for ok, 1 for an error reply, 3 when no reply came.
struct SendCommand {
    static let options = Set(["id", "expected-version", "correlation-id", "causation-id"]).union(
        ClientSession.options)

    let arguments: Arguments
    let configuration: Configuration
    let output: StandardStreams

    func run() throws(CLIError) -> ExitStatus {
        guard arguments.positionals.count == 2 else {
            throw .usage("expected a command type and its JSON data, e.g. send AddProduct '{\"productId\":\"p1\", …}'")
        }
        var document: JSONObject = [
            "id": .string(arguments.options["id"] ?? UUID().uuidString.lowercased()),
            "type": .string(arguments.positionals[0]),
            "data": try JSONArgument.read(arguments.positionals[1], name: "DATA"),
        ]
        if let expected = arguments.options["expected-version"] {
            document["expectedVersion"] = Int(expected).map(JSONValue.int) ?? .string(expected)
        }
        var metadata = JSONObject()
        metadata["correlationId"] = arguments.options["correlation-id"].map(JSONValue.string)
        metadata["causationId"] = arguments.options["causation-id"].map(JSONValue.string)
        if metadata.count > 0 { document["metadata"] = .object(metadata) }

        let session = try ClientSession(arguments: arguments, configuration: configuration)
        let reply = try session.request(.commands, document)
        output.out(JSONWriter.string(.object(reply)))
        return reply.isOK ? .success : .errorReply
    }
}

/// A JSON document given on the command line, or on standard input when it is `-`.
enum JSONArgument {
    static func read(_ argument: String, name: String) throws(CLIError) -> JSONValue {
        var text = argument
        if argument == "-" {
            let bytes = FileHandle.standardInput.readDataToEndOfFile()
            guard let input = String(data: bytes, encoding: .utf8) else { throw .usage("standard input is not UTF-8") }
            text = input
        }
        do {
            return try JSONParser.parse(text)
        } catch {
            throw .usage("\(name) is not valid JSON: \(error)")
        }
    }
}
