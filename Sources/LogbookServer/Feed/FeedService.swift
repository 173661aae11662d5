public import LogbookApplication
public import LogbookMetrics
public import LogbookZMQ

/// The feed role (`logbook run feed`, PostgreSQL): publishes the shared log on a PUB socket
/// in exactly a SQLite worker's feed format, and serves `ReadLog`, so query processes and
/// subscribers work against it unchanged. A publishing thread (feed PUB, hints SUB) and a
/// log-read thread (log ROUTER), each with its own connection to the log (`openStore`: the
/// primary or a streaming replica). Several feed processes may run; each publishes on its
/// own, and a subscriber follows one.
/// `start()` returns once every socket is bound, or throws why one could not be;
/// `stop()` wakes both threads through the context and waits for them to end.
///
/// With `security`, as in a worker: a ZAP handler first (`ZAPThread`), then every socket a
/// CURVE server (the feed admits readers and admins, the hints socket writers and admins:
/// the workers' own keys, the log ROUTER checks each request); `reloadAllowList()` (SIGHUP)
/// puts a new list in force and binds the feed anew. With `supervision`, both loops (and the
/// ZAP handler) check in with the supervisor's watchdog on every turn (`Heartbeat`).
public final class FeedService: Sendable {
    private let context: ZMQContext
    private let endpoints: ServiceEndpoints
    private let hints: String
    private let openStore: WorkerService.StoreOpener
    private let diagnostics: Diagnostics
    private let pollMilliseconds: Int
    private let pageSize: Int
    private let security: ServerSecurity?
    private let supervision: Supervision
    private let threads = ThreadGroup()
    private let stopRequest: StopRequest
    private let metrics: FeedMetrics

    /// Publishes at `endpoints.feed`, serves `ReadLog` at `endpoints.log` and takes the
    /// workers' hints at `hints` (bound here; the workers connect). Without a hint it reads
    /// the log every `pollMilliseconds`.
    public init(
        endpoints: ServiceEndpoints, hints: String, openStore: @escaping WorkerService.StoreOpener,
        diagnostics: Diagnostics, pollMilliseconds: Int = 200, pageSize: Int = 1_000, security: ServerSecurity? = nil,
        supervision: Supervision = Supervision(), clock: any Clock
    ) throws(ZMQError) {
        context = try ZMQContext()
        self.supervision = supervision
        stopRequest = try StopRequest()
        self.security = security
        self.endpoints = endpoints
        self.hints = hints
        self.openStore = openStore
        self.diagnostics = diagnostics
        self.pollMilliseconds = pollMilliseconds
        self.pageSize = pageSize
        metrics = FeedMetrics(started: ProcessStart(clock))
    }

    public func start() throws(ServiceStartError) {
        do {
            if let security {
                try ZAPThread.start(
                    context, security: security, diagnostics: diagnostics, threads: threads, supervision: supervision)
            }
            try threads.startGated([
                ("logbook-feed", { [self] gate in runPublishingLoop(gate) }),
                LogReadLoop.thread(
                    context, at: endpoints.log, openStore: openStore, diagnostics: diagnostics, security: security,
                    supervision: supervision, stop: stopRequest),
            ])
        } catch {
            stop()
            throw error
        }
        diagnostics.info(
            "feed started",
            [
                "feed": endpoints.feed, "log": endpoints.log, "hints": hints,
                "security": security.map { "curve, \($0.allowList.entries.count) client keys" } ?? "off",
            ])
    }

    /// Reads the allow-list again (on SIGHUP); without security there is none to read.
    public func reloadAllowList() { AllowListReload.perform(security, reporting: diagnostics) }

    /// Stops serving; blocks until both threads have closed their sockets. The log-read loop
    /// first hands on the pages it holds (`StopRequest`); what the feed did not publish,
    /// subscribers read from the log.
    public func stop() {
        // The feed socket's monitor holds a socket of the context too; the service made its context.
        ServiceStop(stopRequest: stopRequest, loops: 1, context: context, threads: threads, ownsContext: true)
            .perform { metrics.subscribers.join() }
    }

    private func runPublishingLoop(_ gate: StartupGate) {
        gate.serve(sockets: "feed sockets", store: "event log") {
            let store = RetriedReads(try openStore())
            let head = try store.headPosition()
            let reloads = try security?.watchReloads()
            let publisher = try FeedPublisher(
                context, at: endpoints.feed, head: head, security: security, subscribers: metrics.subscribers)
            let subscriber = try ZMQSocket(context, .subscriber)
            try subscriber.set(.receiveHighWaterMark, 1_000)
            try subscriber.subscribe("")
            try security?.secureServer(subscriber, domain: .hints)
            try subscriber.bind(hints)
            return FeedPublishingLoop(
                publisher: publisher, hints: subscriber, store: store, cursor: head,
                pollMilliseconds: pollMilliseconds, pageSize: pageSize, diagnostics: diagnostics,
                security: security, reloads: reloads, heartbeat: supervision.heartbeat(for: "feed"),
                metrics: metrics)
        }
    }
}

extension FeedService: MetricsSource {
    /// Feed messages published, the position published through, start time and uptime.
    public func metricFamilies() -> [MetricFamily] { metrics.families() }
}
