import LogbookClient
import LogbookCommandLine
import LogbookJSON
import LogbookWire
import LogbookZMQ

/// `logbook status`: asks the worker and the query process for their `Status` and prints
/// `{"worker":{…},"query":{…}}`, each part read back as its typed status (`WorkerStatus`,
/// `QueryStatus`); with several workers in `--commands`, it asks each one and prints
/// `{"workers":{endpoint:{…},…},"query":{…}}` in the listed order. A process that does not
/// answer, or answers with something other than its status, shows as
/// `{"unreachable":"…"}` and makes the exit status 1.
struct StatusCommand: ConfiguredCommand {
    static let spec = CommandSpec(
        name: "status", usage: "[options]",
        listings: [.init("status", "show the worker's and the query process's status")],
        section: .clientCommands,
        description: """
            Prints {"worker":{…},"query":{…}}: the log's head, commands accepted and rejected,
            batch sizes; the query process's checkpoint, lag, read-model counts and rebuild state.
            With several workers in --commands, each is asked and "workers" maps each endpoint
            to its status. A process that does not answer shows as {"unreachable":…} and the
            exit status is 1.
            """,
        options: ClientPatience.options, settings: Configuration.settings)

    let arguments: Arguments
    let configuration: Configuration
    let output: StandardStreams

    func run() throws(CLIError) -> ExitStatus {
        guard arguments.positionals.isEmpty else { throw .usage("status takes no positional arguments") }
        let session = try ClientSession(arguments: arguments, configuration: configuration)
        var parts: [(name: String, ask: () throws(CLIError) -> JSONValue)] = [
            ("worker", { () throws(CLIError) in try session.status(of: .commands, as: WorkerStatus.self).json }),
            ("query", { () throws(CLIError) in try session.status(of: .queries, as: QueryStatus.self).json }),
        ]
        var report = JSONObject()
        var everyoneAnswered = true
        if configuration.endpoints.commands.single == nil {
            let (workers, allAnswered) = Self.eachWorker(session)
            report["workers"] = .object(workers)
            everyoneAnswered = allAnswered
            parts.removeFirst()
        }
        for part in parts {
            do {
                report[part.name] = try part.ask()
            } catch {
                everyoneAnswered = false
                report[part.name] = ["unreachable": .string(error.message)]
            }
        }
        output.out(JSONWriter.string(.object(report)))
        return everyoneAnswered ? .success : .errorReply
    }

    /// Each listed worker's status by endpoint, in the listed order (`{"unreachable":"…"}`
    /// for one that did not answer with its status), and whether every one did.
    private static func eachWorker(_ session: ClientSession) -> (JSONObject, Bool) {
        let client = session.client
        var workers = JSONObject()
        var allAnswered = true
        for answer in ClientSession.wait({ await client.statusOfEachWorker() }) {
            do throws(CLIError) {
                let result: JSONObject
                do throws(LogbookClientError) {
                    result = try answer.outcome.get()
                } catch {
                    throw .unavailable("commands (\(answer.endpoint)): \(error)")
                }
                do {
                    workers[answer.endpoint] = try WorkerStatus(json: .object(result)).json
                } catch {
                    throw .unavailable(
                        "\(answer.endpoint) answered Status with something other than its status: \(error)")
                }
            } catch {
                allAnswered = false
                workers[answer.endpoint] = ["unreachable": .string(error.message)]
            }
        }
        return (workers, allAnswered)
    }
}
