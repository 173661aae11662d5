import LogbookApplication
public import LogbookZMQ

/// The feed role (`logbook run feed`, PostgreSQL): publishes the shared log on a PUB socket
/// in exactly a SQLite worker's feed format, and serves `ReadLog`, so query processes and
/// subscribers work against it unchanged. A publishing thread (feed PUB, hints SUB) and a
/// log-read thread (log ROUTER), each with its own connection to the log (`openStore`: the
/// primary or a streaming replica). Several feed processes may run; each publishes on its
/// own, and a subscriber follows one.
/// `start()` returns once every socket is bound, or throws why one could not be;
/// `stop()` wakes both threads through the context and waits for them to end.
public final class FeedService: Sendable {
    private let context: ZMQContext
    private let endpoints: ServiceEndpoints
    private let hints: String
    private let openStore: WorkerService.StoreOpener
    private let diagnostics: Diagnostics
    private let pollMilliseconds: Int
    private let pageSize: Int
    private let threads = ThreadGroup()

    /// Publishes at `endpoints.feed`, serves `ReadLog` at `endpoints.log` and takes the
    /// workers' hints at `hints` (bound here; the workers connect). Without a hint it reads
    /// the log every `pollMilliseconds`.
    public init(
        endpoints: ServiceEndpoints, hints: String, openStore: @escaping WorkerService.StoreOpener,
        diagnostics: Diagnostics, pollMilliseconds: Int = 200, pageSize: Int = 1_000
    ) throws(ZMQError) {
        context = try ZMQContext()
        self.endpoints = endpoints
        self.hints = hints
        self.openStore = openStore
        self.diagnostics = diagnostics
        self.pollMilliseconds = pollMilliseconds
        self.pageSize = pageSize
    }

    public func start() throws(ServiceStartError) {
        do {
            try threads.startGated([
                ("logbook-feed", { [self] gate in runPublishingLoop(gate) }),
                LogReadLoop.thread(context, at: endpoints.log, openStore: openStore, diagnostics: diagnostics),
            ])
        } catch {
            stop()
            throw error
        }
        diagnostics.info("feed started", ["feed": endpoints.feed, "log": endpoints.log, "hints": hints])
    }

    /// Stops serving; blocks until both threads have closed their sockets.
    public func stop() {
        context.shutdown()
        threads.joinAll()
    }

    private func runPublishingLoop(_ gate: StartupGate) {
        var loop: FeedPublishingLoop
        do {
            let store = RetriedReads(try openStore())
            let head = try store.headPosition()
            let publisher = try FeedPublisher(context, at: endpoints.feed, head: head)
            let subscriber = try ZMQSocket(context, .subscriber)
            try subscriber.set(.receiveHighWaterMark, 1_000)
            try subscriber.subscribe("")
            try subscriber.bind(hints)
            loop = FeedPublishingLoop(
                publisher: publisher, hints: subscriber, store: store, cursor: head,
                pollMilliseconds: pollMilliseconds, pageSize: pageSize, diagnostics: diagnostics)
        } catch let error as ZMQError {
            return gate.fail(ServiceStartError("feed sockets", error.description))
        } catch {
            return gate.fail(ServiceStartError("event log", "\(error)"))
        }
        gate.open()
        loop.run()
    }
}
