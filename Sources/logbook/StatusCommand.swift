import Foundation
import LogbookClient
import LogbookJSON

/// `logbook status`: asks the worker and the query process for their `Status` and prints
/// `{"worker":{…},"query":{…}}`; a process that does not answer shows as
/// `{"unreachable":"…"}` and makes the exit status 1.
struct StatusCommand {
    static let options: Set<String> = ClientSession.options

    let arguments: Arguments
    let configuration: Configuration
    let output: StandardStreams

    func run() throws(CLIError) -> ExitStatus {
        guard arguments.positionals.isEmpty else { throw .usage("status takes no positional arguments") }
        let session = try ClientSession(arguments: arguments, configuration: configuration)
        var report = JSONObject()
        var everyoneAnswered = true
        for (name, server) in [("worker", ServerEndpoint.commands), ("query", .queries)] {
            do {
                let reply = try session.request(server, ["id": .string(UUID().uuidString), "type": "Status"])
                report[name] = reply["result"] ?? .object(reply)
            } catch {
                everyoneAnswered = false
                report[name] = ["unreachable": .string(error.message)]
            }
        }
        output.out(JSONWriter.string(.object(report)))
        return everyoneAnswered ? .success : .errorReply
    }
}
