public import LogbookApplication
import LogbookDomain
import LogbookFeed
public import LogbookMetrics
import LogbookWire
public import LogbookZMQ

/// The read side (`logbook run query`): a projection thread (feed SUB + log reads into the
/// read models), a query thread (queries ROUTER), and, while one runs, a rebuild thread.
/// `start()` returns once the queries socket is bound and the read models are open, or
/// throws why not; `stop()` first lets the query thread stop cleanly (no new request, the
/// answers given are delivered: `StopRequest`), then wakes every thread through the context
/// and waits for them.
///
/// With `security`, its queries socket is a CURVE server behind a ZAP handler bound first
/// (`ZAPThread`), as in the worker; with `clientKeys`, its feed and log-read connections to
/// the worker are CURVE clients with the query process's own key (a `reader` on the worker).
/// With `supervision`, the projection and query loops (and the ZAP handler) check in with
/// the supervisor's watchdog on every turn (`Heartbeat`); the rebuild thread, a one-off job,
/// does not.
public final class QueryService: Sendable {
    private let context: ZMQContext
    private let endpoints: ServiceEndpoints
    private let generations: any ReadModelGenerations
    private let clock: any Clock
    private let diagnostics: Diagnostics
    private let state: QueryProcessState
    private let security: ServerSecurity?
    private let clientKeys: CurveClientKeys?
    private let supervision: Supervision
    private let releaseFreeMemory: @Sendable () -> Void
    /// How long the feed may stay quiet before the projection thread reads the log anyway.
    private let idleCatchUpMilliseconds: Int
    private let threads = ThreadGroup()
    /// Whether `stop()` ends the context (it made it), so that the last answers still leave.
    private let ownsContext: Bool
    private let stopRequest: StopRequest
    private let metrics: QueryMetrics

    public convenience init(
        endpoints: ServiceEndpoints, generations: any ReadModelGenerations, clock: any Clock, diagnostics: Diagnostics,
        security: ServerSecurity? = nil, clientKeys: CurveClientKeys? = nil, supervision: Supervision = Supervision(),
        idleCatchUpMilliseconds: Int = QueryService.defaultIdleCatchUpMilliseconds,
        releaseFreeMemory: @escaping @Sendable () -> Void = {}
    ) throws(ZMQError) {
        try self.init(
            context: try ZMQContext(), endpoints: endpoints, generations: generations, clock: clock,
            diagnostics: diagnostics, security: security, clientKeys: clientKeys, supervision: supervision,
            idleCatchUpMilliseconds: idleCatchUpMilliseconds, releaseFreeMemory: releaseFreeMemory,
            ownsContext: true)
    }

    /// A query process on a context the caller made (a test may bind something in it first);
    /// with `ownsContext`, `stop()` ends the context too.
    init(
        context: ZMQContext, endpoints: ServiceEndpoints, generations: any ReadModelGenerations, clock: any Clock,
        diagnostics: Diagnostics, security: ServerSecurity?, clientKeys: CurveClientKeys?,
        supervision: Supervision = Supervision(),
        idleCatchUpMilliseconds: Int = QueryService.defaultIdleCatchUpMilliseconds,
        releaseFreeMemory: @escaping @Sendable () -> Void = {}, ownsContext: Bool = false
    ) throws(ZMQError) {
        self.context = context
        self.idleCatchUpMilliseconds = idleCatchUpMilliseconds
        self.releaseFreeMemory = releaseFreeMemory
        self.ownsContext = ownsContext
        self.supervision = supervision
        stopRequest = try StopRequest()
        self.security = security
        self.clientKeys = clientKeys
        state = try QueryProcessState()
        metrics = QueryMetrics(state: state, started: ProcessStart(clock))
        self.endpoints = endpoints
        self.generations = generations
        self.clock = clock
        self.diagnostics = diagnostics
    }

    /// How long the feed may stay quiet, by default, before the projection thread reads the
    /// log once: a PUB socket drops silently, so a lost last message has nothing after it to
    /// reveal it, and this bounds how long it can stay unseen.
    public static let defaultIdleCatchUpMilliseconds = 1_000

    public func start() throws(ServiceStartError) {
        let current: (generation: Int, store: any ReadModelStore)
        let checkpoint: Int64
        do {
            current = try generations.openCurrent()
            checkpoint = try current.store.checkpoint()
        } catch {
            throw ServiceStartError("read models", error.description)
        }
        if let security {
            do {
                try ZAPThread.start(
                    context, security: security, diagnostics: diagnostics, threads: threads, supervision: supervision)
            } catch {
                stop()
                throw error
            }
        }
        state.update {
            $0.generation = current.generation
            $0.applied = checkpoint
        }
        let projectionReady = StartupGate()
        let queriesReady = StartupGate()
        // Handed over, not captured: a capture would keep the first generation open (and
        // its files on disk) for the thread's whole life, past any rebuild.
        let handOver = HandOver(current.store)
        let generation = current.generation
        threads.start(name: "logbook-projection") { [self] in
            guard let store = handOver.take() else {
                return projectionReady.fail(ServiceStartError("read models", "taken twice"))
            }
            runProjection(store, generation: generation, checkpoint: checkpoint, projectionReady)
        }
        threads.start(name: "logbook-queries") { [self] in
            defer { stopRequest.loopEnded() }
            runQueries(generation: current.generation, queriesReady)
        }
        do {
            try projectionReady.wait()
            try queriesReady.wait()
        } catch {
            stop()
            throw error
        }
        diagnostics.info(
            "query process started",
            [
                "queries": endpoints.queries, "feed": endpoints.feed, "log": endpoints.log,
                "generation": "\(current.generation)", "checkpoint": "\(checkpoint)",
                "security": security.map { "curve, \($0.allowList.entries.count) client keys" } ?? "off",
                "worker": clientKeys == nil ? "plain" : "curve",
            ])
    }

    /// Reads the allow-list again (on SIGHUP); without security there is none to read.
    public func reloadAllowList() { AllowListReload.perform(security, reporting: diagnostics) }

    /// Stops serving cleanly; blocks until every thread has closed its sockets and, when it
    /// made its context, until libzmq handed on the answers they hold.
    public func stop() {
        ServiceStop(stopRequest: stopRequest, loops: 1, context: context, threads: threads, ownsContext: ownsContext)
            .perform()
    }

    private func runProjection(
        _ store: any ReadModelStore, generation: Int, checkpoint: Int64, _ gate: StartupGate
    ) {
        let follower: FeedFollower
        do {
            follower = try FeedFollower(
                context, feed: endpoints.feed, log: endpoints.log, topics: FeedTopic.allCases, cursor: checkpoint,
                idleCatchUpMilliseconds: idleCatchUpMilliseconds, security: clientKeys)
        } catch {
            return gate.fail(ServiceStartError("feed", error.description))
        }
        var loop = ProjectionLoop(
            follower: follower, store: store, generation: generation, state: state, diagnostics: diagnostics,
            heartbeat: supervision.heartbeat(for: "projection"))
        gate.open()
        loop.run()
    }

    private func runQueries(generation: Int, _ gate: StartupGate) {
        gate.serve(sockets: "queries socket", store: "read models") {
            let reader = try GenerationReader(
                generation: generation, generations: generations, diagnostics: diagnostics)
            let router = try ServerSockets.router(
                context, at: endpoints.queries, replies: .queries, security: security)
            return QueryLoop(
                router: router, reader: reader, state: state, startRebuild: { [self] in startRebuild() },
                clock: clock, diagnostics: diagnostics, security: security,
                heartbeat: supervision.heartbeat(for: "queries"), stop: stopRequest, metrics: metrics)
        }
    }

    /// Starts a rebuild thread (the query thread calls this only when none is running).
    private func startRebuild() {
        let startedAt = clock.now().millisecondsSinceEpoch
        state.update { $0.rebuild = .running(generation: 0, position: 0, head: $0.head, startedAt: startedAt) }
        threads.start(name: "logbook-rebuild") { [self] in
            let job = RebuildJob(
                makeChannel: { [context, endpoints, clientKeys] () throws(FeedFollowError) in
                    do throws(ZMQError) {
                        return try LogReadChannel(
                            context, endpoint: endpoints.log, timeoutMilliseconds: 10_000, security: clientKeys)
                    } catch {
                        throw error.isTerminated ? .stopped : .logUnavailable(error.description)
                    }
                },
                generations: generations, state: state, clock: clock, diagnostics: diagnostics,
                releaseFreeMemory: releaseFreeMemory)
            job.run()
        }
    }
}

extension QueryService: MetricsSource {
    /// Checkpoint, head, lag in events and seconds, events applied, queries by type and
    /// outcome, parked queries, generation and rebuild progress, start time and uptime.
    public func metricFamilies() -> [MetricFamily] { metrics.families(peers: security) }
}
