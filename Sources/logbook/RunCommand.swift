import Glibc
import LogbookApplication
import LogbookCommandLine
import LogbookSQLite
import LogbookServer
import LogbookZMQ

/// `logbook run worker` and `logbook run query`: one long-running process that serves
/// until SIGINT or SIGTERM, then closes its sockets and files and exits 0. SIGHUP makes it
/// read its allow-list of client keys again (with CURVE on).
struct RunCommand: ConfiguredCommand {
    static let spec = CommandSpec(
        name: "run", usage: "worker|query [options]",
        listings: [
            .init("run worker", "the write side: commands, change feed, log reads"),
            .init("run query", "the read side: read models and queries"),
        ],
        section: .processes,
        description: """
            Runs one process in the foreground until SIGINT or SIGTERM, logging to stderr.
            worker: binds --commands (one endpoint), --feed and --log; keeps DIR/events.sqlite3.
            query:  binds --queries, connects to --feed and --log; keeps DIR/readmodels-N.sqlite3.
            With --curve-secret and --clients every socket it binds is a CURVE server that admits
            only the keys in --clients (SIGHUP reads that folder again); a query process reaches
            a secured worker with --curve-key and --server-key.
            """,
        settings: Configuration.settings)

    let arguments: Arguments
    let configuration: Configuration
    let output: StandardStreams

    func run() throws(CLIError) -> ExitStatus {
        guard arguments.positionals.count == 1, let role = arguments.positionals.first else {
            throw .usage("expected what to run: worker or query")
        }
        ProcessSignals.block(including: [SIGHUP])
        let diagnostics = Diagnostics(process: role, threshold: configuration.diagnosticsLevel, clock: SystemClock())
        let service: any RunnableService
        switch role {
        case "worker": service = try makeWorker(diagnostics: diagnostics)
        case "query": service = try makeQuery(diagnostics: diagnostics)
        default: throw .usage("cannot run '\(role)'; expected worker or query")
        }
        do {
            try service.start()
        } catch {
            throw .unavailable(error.description)
        }
        var signal = ProcessSignals.wait(including: [SIGHUP])
        while signal == SIGHUP {
            service.reloadAllowList()
            signal = ProcessSignals.wait(including: [SIGHUP])
        }
        diagnostics.info("stopping", ["signal": ProcessSignals.name(signal)])
        service.stop()
        diagnostics.info("stopped")
        return .success
    }

    private func makeWorker(diagnostics: Diagnostics) throws(CLIError) -> any RunnableService {
        let endpoints = try configuration.workerEndpoints()
        // --curve-key and --server-key are not a worker's (it connects to no one); an environment
        // shared with clients (logbook.env) may set them, so they are ignored here.
        let security = try configuration.serverSecurity()
        try configuration.ensureDataDirectory()
        let path = configuration.eventLogPath
        // Open once here so a bad file fails the start with a clear message.
        do {
            _ = try SQLiteEventStore(path: path, evolution: .standard)
        } catch {
            throw .unavailable(error.description)
        }
        do {
            return try WorkerService(
                endpoints: endpoints,
                openStore: { () throws(EventStoreError) -> any EventStore in
                    try SQLiteEventStore(path: path, evolution: .standard)
                },
                clock: SystemClock(), ids: UUIDGenerator(), diagnostics: diagnostics, security: security)
        } catch {
            throw .unavailable(error.description)
        }
    }

    private func makeQuery(diagnostics: Diagnostics) throws(CLIError) -> any RunnableService {
        let security = try configuration.serverSecurity()
        let clientKeys = try configuration.clientKeys()
        try configuration.ensureDataDirectory()
        do {
            return try QueryService(
                endpoints: configuration.queryEndpoints,
                generations: SQLiteReadModelGenerations(directory: configuration.dataDirectory), clock: SystemClock(),
                diagnostics: diagnostics, security: security, clientKeys: clientKeys)
        } catch {
            throw .unavailable(error.description)
        }
    }
}

/// A service `logbook run` can start and stop.
protocol RunnableService {
    func start() throws(ServiceStartError)
    func stop()
    /// Reads the allow-list of client keys again (SIGHUP).
    func reloadAllowList()
}

extension WorkerService: RunnableService {}
extension QueryService: RunnableService {}
