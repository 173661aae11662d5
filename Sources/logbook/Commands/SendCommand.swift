import Foundation
import LogbookClient
import LogbookCommandLine
import LogbookJSON
import LogbookWire

/// `logbook send TYPE DATA`: sends one command to the worker and prints its reply exactly
/// as it came: `{"id","ok":true,"position","events"}` or `{"id","ok":false,"error"}`.
/// Exit 0 for ok, 1 for an error reply, 3 when no reply came.
struct SendCommand: ConfiguredCommand {
    static let id = OptionSpec.option(
        "id", "ID", "the command id; sending an id again returns the first outcome and appends nothing",
        default: "a new UUID")
    static let expectedVersion = OptionSpec.option(
        "expected-version", "V", "an integer, any or noStream: the version the command's main stream must be at")
    static let correlationId = OptionSpec.option("correlation-id", "ID", "the conversation the command belongs to")
    static let causationId = OptionSpec.option("causation-id", "ID", "what caused the command")

    static let spec = CommandSpec(
        name: "send", usage: "TYPE DATA [options]",
        listings: [
            .init("send TYPE DATA", #"send a command (e.g. RegisterUser '{"userId":"u1",…}') and print the reply"#)
        ],
        section: .clientCommands,
        description: """
            Sends one command to the worker and prints its reply as JSON:
            {"id","ok":true,"position","events":[…]} or {"id","ok":false,"error":{"code","message","details"}}.
            DATA is the command's JSON object, or - to read it from standard input.
            """,
        options: [id, expectedVersion, correlationId, causationId] + ClientPatience.options,
        settings: Configuration.settings)

    let arguments: Arguments
    let configuration: Configuration
    let output: StandardStreams

    func run() throws(CLIError) -> ExitStatus {
        guard arguments.positionals.count == 2 else {
            throw .usage("expected a command type and its JSON data, e.g. send AddProduct '{\"productId\":\"p1\", …}'")
        }
        let document = RequestDocument.command(
            id: arguments.value(Self.id) ?? UUID().uuidString.lowercased(), type: arguments.positionals[0],
            data: try JSONArgument.read(arguments.positionals[1], name: "DATA"),
            expectedVersion: arguments.value(Self.expectedVersion).map { Int($0).map(JSONValue.int) ?? .string($0) },
            correlationId: arguments.value(Self.correlationId), causationId: arguments.value(Self.causationId))

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
