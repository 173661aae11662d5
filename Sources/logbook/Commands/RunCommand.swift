import Glibc
import LogbookApplication
import LogbookClient
import LogbookCommandLine
import LogbookMetrics
import LogbookPostgres
import LogbookSQLite
import LogbookServer
import LogbookZMQ

/// `logbook run worker`, `run query`, `run feed` and `run groups`: one long-running process that serves
/// until SIGINT or SIGTERM, then closes its sockets and files and exits 0. SIGHUP makes it
/// read its allow-list of client keys again (with CURVE on). Under systemd (`NOTIFY_SOCKET`)
/// it says `READY=1` once started, `STOPPING=1` when told to stop, and, with `WatchdogSec=`,
/// its serving loops send `WATCHDOG=1` while every one of them is alive (`Supervision`).
struct RunCommand: ConfiguredCommand {
    static let spec = CommandSpec(
        name: "run", usage: "worker|query|feed|groups [options]",
        listings: [
            .init("run worker", "the write side: commands, change feed or hints, log reads"),
            .init("run query", "the read side: read models and queries"),
            .init("run feed", "PostgreSQL: the shared log's change feed, log reads"),
            .init("run groups", "consumer groups: shared, durable subscriptions with acks"),
        ],
        section: .processes,
        description: """
            Runs one process in the foreground until SIGINT or SIGTERM, logging to stderr.
            worker: binds --commands (one endpoint) and --log; on SQLite (--store sqlite) keeps
                    DIR/events.sqlite3 and binds --feed; on PostgreSQL (--store postgresql://…) shares
                    the database with other workers, binds no feed and hints every --hints endpoint
                    after each commit.
            feed:   on PostgreSQL: binds --feed, --log and --hints; reads the log (from --read-store
                    when given) in position order and publishes it as a SQLite worker does.
            query:  binds --queries, connects to --feed and --log; keeps DIR/readmodels-N.sqlite3.
            groups: binds --groups, connects to --feed and --log; keeps the groups' progress in
                    DIR/groups.sqlite3 (a second groups process on it is refused), or with
                    --store postgresql://… in tables beside the log (run one per database).
            With --curve-secret and --clients every socket it binds is a CURVE server that admits
            only the keys in --clients (SIGHUP reads that folder again). --curve-key and
            --server-key are a query or groups process's key towards the worker (or feed), and a
            PostgreSQL worker's towards the feed processes' --hints.
            Under systemd (NOTIFY_SOCKET set, Type=notify) it says READY=1 once every socket is bound
            and its store open, STOPPING=1 on SIGTERM, and with WatchdogSec= its serving loops send
            WATCHDOG=1 while each of them keeps turning (a wedged loop stops them).
            """,
        settings: Configuration.settings + Configuration.storageSettings + Configuration.metricsSettings
            + Configuration.followSettings)

    let arguments: Arguments
    let configuration: Configuration
    let output: StandardStreams

    func run() throws(CLIError) -> ExitStatus {
        guard arguments.positionals.count == 1, let role = arguments.positionals.first else {
            throw .usage("expected what to run: worker, query, feed or groups")
        }
        ProcessSignals.block(including: [SIGHUP])
        MallocArenas.apply(forRole: role)
        let diagnostics = Diagnostics(process: role, threshold: configuration.diagnosticsLevel, clock: SystemClock())
        let supervision = Supervision(notifier: SystemdNotifier(diagnostics: diagnostics), diagnostics: diagnostics)
        let service: any RunnableService
        switch role {
        case "worker": service = try makeWorker(diagnostics: diagnostics, supervision: supervision)
        case "query": service = try makeQuery(diagnostics: diagnostics, supervision: supervision)
        case "feed": service = try makeFeed(diagnostics: diagnostics, supervision: supervision)
        case "groups": service = try makeGroups(diagnostics: diagnostics, supervision: supervision)
        default: throw .usage("cannot run '\(role)'; expected worker, query, feed or groups")
        }
        let metrics = try serveMetrics(of: service, diagnostics: diagnostics)
        do {
            try service.start()
        } catch {
            metrics?.stop()
            throw .unavailable(error.description)
        }
        // start() returned: every socket is bound and the log (or the read models) is open.
        supervision.ready(status: readiness(of: role))
        var signal = ProcessSignals.wait(including: [SIGHUP])
        while signal == SIGHUP {
            service.reloadAllowList()
            signal = ProcessSignals.wait(including: [SIGHUP])
        }
        diagnostics.info("stopping", ["signal": ProcessSignals.name(signal)])
        supervision.stopping(status: "stopping on \(ProcessSignals.name(signal))")
        metrics?.stop()
        service.stop()
        diagnostics.info("stopped")
        return .success
    }

    /// The status line systemd shows once the process is ready: what it serves, where.
    private func readiness(of role: String) -> String {
        let endpoints = configuration.endpoints
        return switch role {
        case "worker" where configuration.storage.store == .sqlite:
            "serving commands on \(endpoints.commands), feed on \(endpoints.feed), log reads on \(endpoints.log)"
        case "worker": "serving commands on \(endpoints.commands), log reads on \(endpoints.log)"
        case "feed": "publishing the feed on \(endpoints.feed), log reads on \(endpoints.log)"
        case "groups": "serving consumer groups on \(endpoints.groups), following \(endpoints.feed)"
        default: "serving queries on \(endpoints.queries), following \(endpoints.feed)"
        }
    }

    /// With `--metrics`, an HTTP endpoint that serves `service`'s metrics, bound before the
    /// service starts so that a taken port stops the process before it serves anything.
    private func serveMetrics(of service: any RunnableService, diagnostics: Diagnostics) throws(CLIError)
        -> MetricsEndpoint?
    {
        guard let address = configuration.metrics else { return nil }
        let endpoint: MetricsEndpoint
        do {
            endpoint = try MetricsEndpoint(address) { ExpositionWriter.text(service.metricFamilies()) }
        } catch {
            throw .unavailable(error.description)
        }
        diagnostics.info("metrics served", ["url": "http://\(endpoint.boundAddress)/metrics"])
        return endpoint
    }

    private func makeWorker(diagnostics: Diagnostics, supervision: Supervision) throws(CLIError)
        -> any RunnableService
    {
        let endpoints = try configuration.workerEndpoints()
        let security = try configuration.serverSecurity()
        let storage = configuration.storage
        // A worker's only connections out are its hints to feed processes (PostgreSQL), made
        // with --curve-key; on SQLite it connects to no one, and an environment shared with
        // clients (logbook.env) may set the key, so it is ignored there.
        let hintKeys = storage.store == .sqlite ? nil : try configuration.clientKeys()
        let store = try StoreOpening(storage.store, configuration: configuration, diagnostics: diagnostics)
        diagnostics.info("event log opened", ["store": store.description])
        try store.finishForgetting(diagnostics: diagnostics)
        // On PostgreSQL other workers write the same log: the feed processes publish it.
        let afterCommit: WorkerService.AfterCommit =
            storage.store == .sqlite ? .publishFeed : .hintFeedProcesses(storage.hints)
        do {
            return try WorkerService(
                endpoints: endpoints, log: store.worker, clock: SystemClock(), ids: RandomEventIds(),
                diagnostics: diagnostics, afterCommit: afterCommit, security: security, hintKeys: hintKeys,
                supervision: supervision)
        } catch {
            throw .unavailable(error.description)
        }
    }

    private func makeFeed(diagnostics: Diagnostics, supervision: Supervision) throws(CLIError) -> any RunnableService {
        let storage = configuration.storage
        guard case .postgres(let primaryString) = storage.store else {
            throw .usage("run feed needs --store postgresql://… (on SQLite the worker publishes the feed)")
        }
        guard storage.hints.count == 1, let hints = storage.hints.first else {
            throw .usage("run feed binds one --hints endpoint; got \(storage.hints.count)")
        }
        let security = try configuration.serverSecurity()
        // The primary first (it is the log: its schema is checked, or created), then the reads' source.
        let primary = try StoreOpening(storage.store, configuration: configuration, diagnostics: diagnostics)
        // A replica's reads wait for the primary's synchronous standbys, asked through --store.
        let reads = try storage.readStore.map { replica throws(CLIError) in
            try StoreOpening(
                .postgres(replica), configuration: configuration, diagnostics: diagnostics, vault: primary.vault,
                replicaOf: primaryString)
        }
        diagnostics.info("event log opened", ["store": primary.description, "reads": (reads ?? primary).description])
        do {
            // Like a query process, a feed process does not use --commands.
            return try FeedService(
                endpoints: configuration.queryEndpoints, hints: hints, openStore: (reads ?? primary).open,
                diagnostics: diagnostics, security: security, supervision: supervision, clock: SystemClock())
        } catch {
            throw .unavailable(error.description)
        }
    }

    private func makeQuery(diagnostics: Diagnostics, supervision: Supervision) throws(CLIError)
        -> any RunnableService
    {
        let security = try configuration.serverSecurity()
        let clientKeys = try configuration.clientKeys()
        try configuration.ensureDataDirectory()
        do {
            return try QueryService(
                endpoints: configuration.queryEndpoints,
                generations: SQLiteReadModelGenerations(directory: configuration.dataDirectory), clock: SystemClock(),
                diagnostics: diagnostics, security: security, clientKeys: clientKeys, supervision: supervision,
                idleCatchUpMilliseconds: configuration.idleCatchUpMilliseconds,
                releaseFreeMemory: MallocArenas.releaseFreeMemory)
        } catch {
            throw .unavailable(error.description)
        }
    }
}

extension RunCommand {
    private func makeGroups(diagnostics: Diagnostics, supervision: Supervision) throws(CLIError)
        -> any RunnableService
    {
        let security = try configuration.serverSecurity()
        let clientKeys = try configuration.clientKeys()
        try configuration.ensureDataDirectory()
        let openStore = try openGroupStore(diagnostics: diagnostics)
        do {
            return try GroupsService(
                endpoints: configuration.queryEndpoints, openStore: openStore,
                clock: SystemClock(), diagnostics: diagnostics, security: security, clientKeys: clientKeys,
                supervision: supervision, idleCatchUpMilliseconds: configuration.idleCatchUpMilliseconds)
        } catch {
            throw .unavailable(error.description)
        }
    }
}

extension RunCommand {
    /// The groups' store as `--store` names it: the data directory's `groups.sqlite3`, or the
    /// tables beside the log in PostgreSQL. Opened once here first, so that a store that
    /// cannot be used stops the start with one line and exit status 3 before anything is
    /// bound; the groups thread then opens its own.
    private func openGroupStore(diagnostics: Diagnostics) throws(CLIError)
        -> @Sendable () throws(GroupStoreError) -> any GroupStore
    {
        let open: @Sendable () throws(GroupStoreError) -> any GroupStore
        let description: String
        let path = configuration.path("groups.sqlite3")
        // Held by the opener, which the groups process keeps for its whole life.
        let lock = configuration.storage.store == .sqlite ? try ServingLock(path: path + "-serving", what: path) : nil
        do {
            switch configuration.storage.store {
            case .sqlite:
                open = { () throws(GroupStoreError) -> any GroupStore in
                    withExtendedLifetime(lock) {}
                    return try SQLiteGroupStore(path: path)
                }
                _ = try open()
                description = path
            case .postgres(let connectionString):
                open = { () throws(GroupStoreError) -> any GroupStore in
                    try PostgresGroupStore(url: connectionString)
                }
                description = try configuration.storage.wait.retrying(
                    "group store", diagnostics: diagnostics, redacting: connectionString
                ) { () throws(GroupStoreError) in
                    try PostgresGroupStore(url: connectionString).target
                }
            }
        } catch {
            throw .unavailable(error.description)
        }
        diagnostics.info("group store opened", ["store": description])
        return open
    }
}

/// A service `logbook run` can start and stop, and whose metrics it can serve.
protocol RunnableService: MetricsSource {
    func start() throws(ServiceStartError)
    func stop()
    /// Reads the allow-list of client keys again (SIGHUP).
    func reloadAllowList()
}

extension WorkerService: RunnableService {}
extension QueryService: RunnableService {}
extension FeedService: RunnableService {}
extension GroupsService: RunnableService {}
