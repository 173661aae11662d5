public import LogbookApplication
public import LogbookZMQ

/// The write side (`logbook run worker`): a command loop thread (commands ROUTER + feed
/// PUB) and a log-read thread (log ROUTER), each with its own connection to the log.
/// `start()` returns once every socket is bound, or throws why one could not be;
/// `stop()` wakes both threads through the context and waits for them to end.
///
/// With `security`, every socket is a CURVE server and a ZAP handler thread, started and
/// bound before any of them, admits only the allow-list's keys (`ZAPThread`); `start()`
/// fails if it cannot be bound. `reloadAllowList()` (SIGHUP) puts a new list in force.
public final class WorkerService: Sendable {
    /// Opens a connection to the event log; called once on each thread that needs one.
    public typealias StoreOpener = @Sendable () throws(EventStoreError) -> any EventStore

    private let context: ZMQContext
    private let endpoints: ServiceEndpoints
    private let openStore: StoreOpener
    private let clock: any Clock
    private let ids: any IDGenerator
    private let diagnostics: Diagnostics
    private let maximumBatch: Int
    private let security: ServerSecurity?
    private let threads = ThreadGroup()

    public convenience init(
        endpoints: ServiceEndpoints, openStore: @escaping StoreOpener, clock: any Clock, ids: any IDGenerator,
        diagnostics: Diagnostics, maximumBatch: Int = 2_048, security: ServerSecurity? = nil
    ) throws(ZMQError) {
        try self.init(
            context: try ZMQContext(), endpoints: endpoints, openStore: openStore, clock: clock, ids: ids,
            diagnostics: diagnostics, maximumBatch: maximumBatch, security: security)
    }

    /// A worker on a context the caller made (a test may bind something in it first).
    init(
        context: ZMQContext, endpoints: ServiceEndpoints, openStore: @escaping StoreOpener, clock: any Clock,
        ids: any IDGenerator, diagnostics: Diagnostics, maximumBatch: Int, security: ServerSecurity?
    ) throws(ZMQError) {
        self.context = context
        self.security = security
        self.endpoints = endpoints
        self.openStore = openStore
        self.clock = clock
        self.ids = ids
        self.diagnostics = diagnostics
        self.maximumBatch = maximumBatch
    }

    public func start() throws(ServiceStartError) {
        if let security {
            do {
                try ZAPThread.start(context, security: security, diagnostics: diagnostics, threads: threads)
            } catch {
                stop()
                throw error
            }
        }
        let commandsReady = StartupGate()
        let logReady = StartupGate()
        threads.start(name: "logbook-commands") { [self] in runCommandLoop(commandsReady) }
        threads.start(name: "logbook-log-reads") { [self] in runLogReadLoop(logReady) }
        do {
            try commandsReady.wait()
            try logReady.wait()
        } catch {
            stop()
            throw error
        }
        diagnostics.info(
            "worker started",
            [
                "commands": endpoints.commands, "feed": endpoints.feed, "log": endpoints.log,
                "security": security.map { "curve, \($0.allowList.entries.count) client keys" } ?? "off",
            ])
    }

    /// Reads the allow-list again (on SIGHUP); without security there is none to read.
    public func reloadAllowList() {
        guard let security else { return diagnostics.info("no allow-list to reload: security is off") }
        security.reload(reporting: diagnostics)
    }

    /// Stops serving; blocks until both threads have closed their sockets.
    public func stop() {
        context.shutdown()
        threads.joinAll()
    }

    private func runCommandLoop(_ gate: StartupGate) {
        var loop: CommandLoop
        do {
            let store = try openStore()
            let handler = CommandHandler(store: store, clock: clock, ids: ids)
            let head = try store.headPosition()
            let reloads = try security?.watchReloads()
            let feed = try FeedPublisher(context, at: endpoints.feed, head: head, security: security)
            let router = try ServerSockets.router(context, at: endpoints.commands, security: security)
            loop = CommandLoop(
                router: router, feed: feed, handler: handler, store: store, clock: clock, diagnostics: diagnostics,
                maximumBatch: maximumBatch, security: security, reloads: reloads)
        } catch let error as ZMQError {
            return gate.fail(ServiceStartError("worker sockets", error.description))
        } catch {
            return gate.fail(ServiceStartError("event log", "\(error)"))
        }
        gate.open()
        loop.run()
    }

    private func runLogReadLoop(_ gate: StartupGate) {
        let loop: LogReadLoop
        do {
            let reader = LogReader(store: try openStore())
            loop = LogReadLoop(
                router: try ServerSockets.router(context, at: endpoints.log, security: security), reader: reader,
                diagnostics: diagnostics, requestGuard: RequestGuard(security: security))
        } catch let error as ZMQError {
            return gate.fail(ServiceStartError("log socket", error.description))
        } catch {
            return gate.fail(ServiceStartError("event log", "\(error)"))
        }
        gate.open()
        loop.run()
    }
}
