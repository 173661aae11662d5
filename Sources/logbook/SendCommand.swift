import Foundation
import LogbookApplication
import LogbookJSON

/// `logbook send TYPE DATA`: runs one command against the event log and prints the reply
/// exactly as the wire contract shapes it. Until the bus lands it runs in-process on the
/// SQLite log of the data directory; a log that cannot be opened is not a reply but a
/// failure of the command line (one line on stderr, exit status 3).
struct SendCommand {
    static let options: Set<String> = ["id", "expected-version", "correlation-id", "causation-id"]

    let arguments: Arguments
    let configuration: Configuration
    let output: StandardStreams

    func run() throws(CLIError) -> ExitStatus {
        guard arguments.positionals.count == 2 else {
            throw .usage("expected a command type and its JSON data, e.g. send AddProduct '{\"productId\":\"p1\", …}'")
        }
        let type = arguments.positionals[0]
        let id = arguments.options["id"] ?? UUID().uuidString.lowercased()
        let dataText = try readData(arguments.positionals[1])
        let store = try configuration.openEventLog(create: true)
        let reply = reply(id: id, type: type, dataText: dataText, store: store)
        output.out(JSONWriter.string(reply))
        return reply.objectValue?["ok"] == .bool(true) ? .success : .errorReply
    }

    private func reply(id: String, type: String, dataText: String, store: any EventStore) -> JSONValue {
        let data: JSONValue
        do {
            data = try JSONParser.parse(dataText)
        } catch {
            return WireEncoding.failure(id: id, ServiceError(.malformedRequest, "data is not valid JSON: \(error)"))
        }
        let expected: ExpectedVersion
        do {
            expected = try ExpectedVersion(json: arguments.options["expected-version"].map(Self.expectedVersionJSON))
        } catch {
            return WireEncoding.failure(id: id, error)
        }
        let handler = CommandHandler(store: store, clock: SystemClock(), ids: UUIDGenerator())
        let request = CommandRequest(
            commandId: id, type: type, data: data, expectedVersion: expected,
            correlationId: arguments.options["correlation-id"], causationId: arguments.options["causation-id"])
        return WireEncoding.commandReply(id: id, handler.handle(request))
    }

    /// `--expected-version 3`, `any` or `noStream`, as the JSON value the wire would carry.
    private static func expectedVersionJSON(_ text: String) -> JSONValue {
        Int(text).map(JSONValue.int) ?? .string(text)
    }

    /// The JSON data, or standard input when it is `-`.
    private func readData(_ argument: String) throws(CLIError) -> String {
        guard argument == "-" else { return argument }
        let bytes = FileHandle.standardInput.readDataToEndOfFile()
        guard let text = String(data: bytes, encoding: .utf8) else { throw .usage("standard input is not UTF-8") }
        return text
    }
}
