import LogbookClient
import LogbookCommandLine
import LogbookJSON
import LogbookWire

/// `logbook status`: asks the worker and the query process for their `Status` and prints
/// `{"worker":{…},"query":{…}}`, each part read back as its typed status (`WorkerStatus`,
/// `QueryStatus`); a process that does not answer, or answers with something other than
/// its status, shows as `{"unreachable":"…"}` and makes the exit status 1.
struct StatusCommand: ConfiguredCommand {
    static let spec = CommandSpec(
        name: "status", usage: "[options]",
        listings: [.init("status", "show the worker's and the query process's status")],
        section: .clientCommands,
        description: """
            Prints {"worker":{…},"query":{…}}: the log's head, commands accepted and rejected,
            batch sizes; the query process's checkpoint, lag, read-model counts and rebuild state.
            A process that does not answer shows as {"unreachable":…} and the exit status is 1.
            """,
        options: ClientPatience.options, settings: Configuration.settings)

    let arguments: Arguments
    let configuration: Configuration
    let output: StandardStreams

    func run() throws(CLIError) -> ExitStatus {
        guard arguments.positionals.isEmpty else { throw .usage("status takes no positional arguments") }
        let session = try ClientSession(arguments: arguments, configuration: configuration)
        let parts: [(name: String, ask: () throws(CLIError) -> JSONValue)] = [
            ("worker", { () throws(CLIError) in try session.status(of: .commands, as: WorkerStatus.self).json }),
            ("query", { () throws(CLIError) in try session.status(of: .queries, as: QueryStatus.self).json }),
        ]
        var report = JSONObject()
        var everyoneAnswered = true
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
}
