public import LogbookApplication
public import LogbookDomain
public import LogbookMetrics
public import LogbookZMQ

/// The write side (`logbook run worker`): a command loop thread (commands ROUTER + feed
/// PUB, or on PostgreSQL a hints PUB) with its commit stage's threads (deciding and
/// appending one batch while the loop reads the next and delivers the last; with a
/// `LogFlusher`, syncing the last ones meanwhile), and a log-read thread (log ROUTER),
/// each with its own connection to the log (`WorkerLogConnections`: the readers see only
/// what is durable).
/// `start()` returns once every socket is bound, or throws why one could not be;
/// `stop()` is a clean stop (SIGTERM): both loops take no new request, finish the batch in
/// hand and deliver its replies and feed messages (`StopRequest`, a few seconds at most),
/// then the context is shut down and every thread waited for.
///
/// With `security`, every socket it binds is a CURVE server and a ZAP handler thread, started
/// and bound before any of them, admits only the allow-list's keys (`ZAPThread`); `start()`
/// fails if it cannot be bound. `reloadAllowList()` (SIGHUP) puts a new list in force. Its
/// hints to feed processes (PostgreSQL) go out as a CURVE client with `hintKeys`, a key of
/// its own that the feed processes list as a `writer`.
///
/// With `supervision` (systemd's watchdog), each serving loop, its ZAP handler's too, checks
/// in on every turn (`Heartbeat`); the caller says ready once `start()` returned.
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
    private let log: WorkerLogConnections
    private let clock: any Clock
    private let ids: any IDGenerator
    private let diagnostics: Diagnostics
    private let maximumBatch: Int
    private let afterCommit: AfterCommit
    private let security: ServerSecurity?
    private let hintKeys: CurveClientKeys?
    private let supervision: Supervision
    private let threads = ThreadGroup()
    /// Whether `stop()` ends the context (it made it), so that replies sent last still leave.
    private let ownsContext: Bool
    private let stopRequest: StopRequest
    private let metrics: WorkerMetrics

    /// A worker whose every connection comes from `openStore`, each append durable when it returns.
    public convenience init(
        endpoints: ServiceEndpoints, openStore: @escaping StoreOpener, buckets: EmailBucketing, clock: any Clock,
        ids: any IDGenerator, diagnostics: Diagnostics, maximumBatch: Int = 2_048,
        afterCommit: AfterCommit = .publishFeed, security: ServerSecurity? = nil, hintKeys: CurveClientKeys? = nil,
        supervision: Supervision = Supervision()
    ) throws(ZMQError) {
        try self.init(
            endpoints: endpoints, log: .syncingEachCommit(openStore, buckets: buckets), clock: clock, ids: ids,
            diagnostics: diagnostics,
            maximumBatch: maximumBatch, afterCommit: afterCommit, security: security, hintKeys: hintKeys,
            supervision: supervision)
    }

    /// A worker whose connections come from `log`: a writer (with its flusher, if its commits
    /// return before their sync) and readers.
    public convenience init(
        endpoints: ServiceEndpoints, log: WorkerLogConnections, clock: any Clock, ids: any IDGenerator,
        diagnostics: Diagnostics, maximumBatch: Int = 2_048, afterCommit: AfterCommit = .publishFeed,
        security: ServerSecurity? = nil, hintKeys: CurveClientKeys? = nil, supervision: Supervision = Supervision()
    ) throws(ZMQError) {
        try self.init(
            context: try ZMQContext(), endpoints: endpoints, log: log, clock: clock, ids: ids,
            diagnostics: diagnostics, maximumBatch: maximumBatch, afterCommit: afterCommit, security: security,
            hintKeys: hintKeys, supervision: supervision, ownsContext: true)
    }

    /// A worker on a context the caller made (a test may bind something in it first); with
    /// `ownsContext`, `stop()` ends the context too.
    init(
        context: ZMQContext, endpoints: ServiceEndpoints, log: WorkerLogConnections, clock: any Clock,
        ids: any IDGenerator, diagnostics: Diagnostics, maximumBatch: Int, afterCommit: AfterCommit = .publishFeed,
        security: ServerSecurity?, hintKeys: CurveClientKeys? = nil, supervision: Supervision = Supervision(),
        ownsContext: Bool = false
    ) throws(ZMQError) {
        self.context = context
        self.ownsContext = ownsContext
        self.supervision = supervision
        stopRequest = try StopRequest()
        self.security = security
        self.hintKeys = hintKeys
        self.endpoints = endpoints
        self.afterCommit = afterCommit
        self.log = log
        self.clock = clock
        self.ids = ids
        self.diagnostics = diagnostics
        self.maximumBatch = maximumBatch
        metrics = WorkerMetrics(security: security, started: ProcessStart(clock))
    }

    public func start() throws(ServiceStartError) {
        do {
            if let security {
                try ZAPThread.start(
                    context, security: security, diagnostics: diagnostics, threads: threads, supervision: supervision)
            }
            try threads.startGated([
                (
                    "logbook-commands",
                    { [self] gate in
                        defer { stopRequest.loopEnded() }
                        runCommandLoop(gate)
                    }
                ),
                LogReadLoop.thread(
                    context, at: endpoints.log, openStore: log.openReader, diagnostics: diagnostics, security: security,
                    supervision: supervision, stop: stopRequest),
            ])
        } catch {
            stop()
            throw error
        }
        let securityState = security.map { "curve, \($0.allowList.entries.count) client keys" } ?? "off"
        switch afterCommit {
        case .publishFeed:
            diagnostics.info(
                "worker started",
                [
                    "commands": endpoints.commands, "feed": endpoints.feed, "log": endpoints.log,
                    "security": securityState,
                ])
        case .hintFeedProcesses(let hints):
            diagnostics.info(
                "worker started",
                [
                    "commands": endpoints.commands, "log": endpoints.log, "hints": hints.joined(separator: ","),
                    "security": securityState, "hinting": hintKeys == nil ? "plain" : "curve",
                ])
        }
    }

    /// Reads the allow-list again (on SIGHUP); without security there is none to read.
    public func reloadAllowList() { AllowListReload.perform(security, reporting: diagnostics) }

    /// Stops serving cleanly; blocks until every thread has closed its sockets (libzmq then
    /// delivers what they hold for up to `StopRequest.drainMilliseconds` more).
    public func stop() {
        // The feed socket's monitor holds a socket of the context too.
        ServiceStop(stopRequest: stopRequest, loops: 2, context: context, threads: threads, ownsContext: ownsContext)
            .perform { metrics.subscribers.join() }
    }

    private func runCommandLoop(_ gate: StartupGate) {
        switch afterCommit {
        case .publishFeed:
            serveCommands(gate) { [context, endpoints, security, metrics] head throws(ZMQError) in
                try FeedPublisher(
                    context, at: endpoints.feed, head: head, security: security, subscribers: metrics.subscribers)
            }
        case .hintFeedProcesses(let hints):
            serveCommands(gate) { [context, hintKeys] _ throws(ZMQError) in
                try CommitHints(context, connectingTo: hints, security: hintKeys)
            }
        }
    }

    /// Opens the store and the sockets, says so through `gate`, then serves commands;
    /// `makeAnnouncer` gets the log's head at start.
    private func serveCommands<Announcer: CommitAnnouncer & ~Copyable>(
        _ gate: StartupGate, _ makeAnnouncer: (Int64) throws(ZMQError) -> Announcer
    ) {
        gate.serve(sockets: "worker sockets", store: "event log") {
            let writer = try log.openWriter()
            let handler = CommandHandler(
                store: TimedEventStore(store: writer.store, metrics: metrics), clock: clock, ids: ids,
                buckets: log.buckets)
            // Status reads the head through a connection of its own, not the stage's.
            let headReads = try log.openReader()
            let head = try headReads.headPosition()
            metrics.update { $0.head = head }
            let reloads = try security?.watchReloads()
            let announcer = try makeAnnouncer(head)
            let router = try ServerSockets.router(
                context, at: endpoints.commands, replies: .commands, security: security)
            let commits = try CommitStage(
                handler: handler, flusher: writer.flusher, turns: writer.turns,
                heartbeat: supervision.heartbeat(for: "commits"),
                flushHeartbeat: writer.flusher == nil ? Heartbeat() : supervision.heartbeat(for: "flushes"))
            return CommandLoop(
                router: router, announcer: announcer, commits: commits, headReads: headReads, clock: clock,
                diagnostics: diagnostics, maximumBatch: maximumBatch, security: security, reloads: reloads,
                heartbeat: supervision.heartbeat(for: "commands"), stop: stopRequest, metrics: metrics)
        }
    }
}

extension WorkerService: MetricsSource {
    /// Commands, rejections by code, batch sizes, commit and command latency, events
    /// appended and published, the head, start time and uptime (and CURVE counts).
    public func metricFamilies() -> [MetricFamily] { metrics.families() }
}
