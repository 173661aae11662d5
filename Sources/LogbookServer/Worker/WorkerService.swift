public import LogbookApplication
public import LogbookZMQ

/// The write side (`logbook run worker`): a command loop thread (commands ROUTER + feed
/// PUB, or on PostgreSQL a hints PUB) and a log-read thread (log ROUTER), each with its
/// own connection to the log.
/// `start()` returns once every socket is bound, or throws why one could not be;
/// `stop()` wakes both threads through the context and waits for them to end.
public final class WorkerService: Sendable {
    /// Opens a connection to the event log; called once on each thread that needs one.
    public typealias StoreOpener = @Sendable () throws(EventStoreError) -> any EventStore

    /// What the worker does after a commit that appended events.
    public enum AfterCommit: Sendable, Equatable {
        /// Publishes them on its own feed PUB (bound at `endpoints.feed`): the worker is the
        /// log's only writer (SQLite).
        case publishFeed
        /// Binds no feed and sends a hint to each feed process's hints endpoint: several
        /// workers share the log (PostgreSQL) and the feed processes publish it.
        case hintFeedProcesses([String])
    }

    private let context: ZMQContext
    private let endpoints: ServiceEndpoints
    private let openStore: StoreOpener
    private let clock: any Clock
    private let ids: any IDGenerator
    private let diagnostics: Diagnostics
    private let maximumBatch: Int
    private let afterCommit: AfterCommit
    private let threads = ThreadGroup()

    public init(
        endpoints: ServiceEndpoints, openStore: @escaping StoreOpener, clock: any Clock, ids: any IDGenerator,
        diagnostics: Diagnostics, maximumBatch: Int = 2_048, afterCommit: AfterCommit = .publishFeed
    ) throws(ZMQError) {
        context = try ZMQContext()
        self.endpoints = endpoints
        self.afterCommit = afterCommit
        self.openStore = openStore
        self.clock = clock
        self.ids = ids
        self.diagnostics = diagnostics
        self.maximumBatch = maximumBatch
    }

    public func start() throws(ServiceStartError) {
        do {
            try threads.startGated([
                ("logbook-commands", { [self] gate in runCommandLoop(gate) }),
                LogReadLoop.thread(context, at: endpoints.log, openStore: openStore, diagnostics: diagnostics),
            ])
        } catch {
            stop()
            throw error
        }
        switch afterCommit {
        case .publishFeed:
            diagnostics.info(
                "worker started", ["commands": endpoints.commands, "feed": endpoints.feed, "log": endpoints.log])
        case .hintFeedProcesses(let hints):
            diagnostics.info(
                "worker started",
                ["commands": endpoints.commands, "log": endpoints.log, "hints": hints.joined(separator: ",")])
        }
    }

    /// Stops serving; blocks until both threads have closed their sockets.
    public func stop() {
        context.shutdown()
        threads.joinAll()
    }

    private func runCommandLoop(_ gate: StartupGate) {
        switch afterCommit {
        case .publishFeed:
            serveCommands(gate) { [context, endpoints] head throws(ZMQError) in
                try FeedPublisher(context, at: endpoints.feed, head: head)
            }
        case .hintFeedProcesses(let hints):
            serveCommands(gate) { [context] _ throws(ZMQError) in try CommitHints(context, connectingTo: hints) }
        }
    }

    /// Opens the store and the sockets, says so through `gate`, then serves commands;
    /// `makeAnnouncer` gets the log's head at start.
    private func serveCommands<Announcer: CommitAnnouncer & ~Copyable>(
        _ gate: StartupGate, _ makeAnnouncer: (Int64) throws(ZMQError) -> Announcer
    ) {
        var loop: CommandLoop<Announcer>
        do {
            let store = try openStore()
            let handler = CommandHandler(store: store, clock: clock, ids: ids)
            let head = try store.headPosition()
            let announcer = try makeAnnouncer(head)
            let router = try ServerSockets.router(context, at: endpoints.commands)
            loop = CommandLoop(
                router: router, announcer: announcer, handler: handler, store: store, clock: clock,
                diagnostics: diagnostics, maximumBatch: maximumBatch)
        } catch let error as ZMQError {
            return gate.fail(ServiceStartError("worker sockets", error.description))
        } catch {
            return gate.fail(ServiceStartError("event log", "\(error)"))
        }
        gate.open()
        loop.run()
    }
}
