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
/// `{"unreachable":"…"}` and makes the exit status 1. With `--check` it is a health check
/// (`HealthCheck`): one line on stderr per failing process, exit status 1 if there is any.
struct StatusCommand: ConfiguredCommand {
    static let spec = CommandSpec(
        name: "status", usage: "[--check [--max-lag N]] [options]",
        listings: [.init("status", "show the worker's and the query process's status; --check: health")],
        section: .clientCommands,
        description: """
            Prints {"worker":{…},"query":{…}}: the log's head, commands accepted and rejected,
            batch sizes; the query process's checkpoint, lag, read-model counts and rebuild state.
            With several workers in --commands, each is asked and "workers" maps each endpoint
            to its status. A process that does not answer shows as {"unreachable":…} and the
            exit status is 1.
            With --check, a health check for scripts and monitors: also one line on stderr for
            each failing process (down, refusing Status, or a query process more than --max-lag
            events behind the log's head) and exit status 1 if there is any; 0 when all are healthy.
            """,
        options: [.check, .maxLag] + ClientPatience.options, settings: Configuration.settings)

    let arguments: Arguments
    let configuration: Configuration
    let output: StandardStreams

    func run() throws(CLIError) -> ExitStatus {
        guard arguments.positionals.isEmpty else { throw .usage("status takes no positional arguments") }
        let checking = arguments.isSet(.check)
        let maximumLag = try arguments.integer(.maxLag, in: 0...Int(Int32.max)) ?? HealthCheck.defaultMaximumLag
        if arguments.value(.maxLag) != nil && !checking { throw .usage("--max-lag goes with --check") }
        let session = try ClientSession(arguments: arguments, configuration: configuration)
        var health = HealthCheck(maximumLag: maximumLag)
        var report = JSONObject()
        var everyoneAnswered = true
        var logHead: Int64?
        // The workers first, so the query process's checkpoint is read after their head.
        let workers =
            configuration.endpoints.commands.single.map { endpoint in
                [(endpoint, Result { () throws(CLIError) in try session.status(of: .commands, as: WorkerStatus.self) })]
            } ?? Self.eachWorker(session)
        var workerReports = JSONObject()
        for (endpoint, answer) in workers {
            switch answer {
            case .success(let reply):
                workerReports[endpoint] = reply.json
                switch reply {
                case .status(let status):
                    logHead = max(logHead ?? 0, status.head ?? 0)
                    health.worker(status, at: endpoint)
                case .refused(let error): health.refused("worker", at: endpoint, error)
                }
            case .failure(let error):
                everyoneAnswered = false
                workerReports[endpoint] = ["unreachable": .string(error.message)]
                health.down("worker", at: endpoint, error.message)
            }
        }
        if let single = configuration.endpoints.commands.single {
            report["worker"] = workerReports[single]
        } else {
            report["workers"] = .object(workerReports)
        }
        let queries = configuration.endpoints.queries
        do {
            let reply = try session.status(of: .queries, as: QueryStatus.self)
            report["query"] = reply.json
            switch reply {
            case .status(let status): health.query(status, at: queries, logHead: logHead)
            case .refused(let error): health.refused("query", at: queries, error)
            }
        } catch {
            everyoneAnswered = false
            report["query"] = ["unreachable": .string(error.message)]
            health.down("query", at: queries, error.message)
        }
        output.out(JSONWriter.string(.object(report)))
        guard checking else { return everyoneAnswered ? .success : .errorReply }
        for problem in health.problems { output.error("status check: \(problem)") }
        return health.isHealthy ? .success : .errorReply
    }

    /// Each listed worker's status by endpoint, in the listed order, or why it did not
    /// answer with its status.
    private static func eachWorker(_ session: ClientSession) -> [(String, Result<StatusReply<WorkerStatus>, CLIError>)]
    {
        let client = session.client
        return ClientSession.wait({ await client.statusOfEachWorker() }).map { answer in
            let result = Result { () throws(CLIError) -> StatusReply<WorkerStatus> in
                let result: JSONObject
                do throws(LogbookClientError) {
                    result = try answer.outcome.get()
                } catch {
                    throw .unavailable("commands (\(answer.endpoint)): \(error)")
                }
                do {
                    return .status(try WorkerStatus(json: .object(result)))
                } catch {
                    throw .unavailable(
                        "\(answer.endpoint) answered Status with something other than its status: \(error)")
                }
            }
            return (answer.endpoint, result)
        }
    }
}

extension OptionSpec {
    static let check = OptionSpec.flag(
        "check", "health check: one line on stderr per failing process, exit status 1 if any")
    static let maxLag = OptionSpec.option(
        "max-lag", "N", "with --check: most events a query process may be behind the log's head",
        default: "\(HealthCheck.defaultMaximumLag)")
}
