import LogbookApplication
import LogbookDomain
import LogbookJSON
import LogbookMetrics
import LogbookWire
import LogbookZMQ

/// The worker's command loop, on its own thread: waits for requests on the commands
/// ROUTER, drains every request waiting (up to `maximumBatch`), decides them in arrival
/// order against current state and appends them in one group commit (`CommandHandler`),
/// and only then replies to each and announces the new events in position order: it
/// publishes them (`FeedPublisher`, SQLite) or hints the feed processes (`CommitHints`,
/// PostgreSQL), whichever `Announcer` it was given.
/// A client that vanished before its reply costs nothing: its reply is dropped.
///
/// With CURVE on, each request is checked against its sender's current role (`RequestGuard`):
/// commands need `writer` (or `admin`), `Status` needs `admin`; and after each reload of the
/// allow-list the announcer is told (`allowListReloaded`: the feed socket is bound anew, so
/// revoked subscribers are cut off).
struct CommandLoop<Announcer: CommitAnnouncer & ~Copyable>: ~Copyable {
    let router: ZMQSocket
    var announcer: Announcer
    let handler: CommandHandler
    let store: any EventStore
    let diagnostics: Diagnostics
    let maximumBatch: Int
    let requestGuard: RequestGuard
    /// Readable after each reload of the allow-list (nil with security off).
    let reloads: WakeUpPipe?
    /// The loop's statistics, shared with `Status` and the metrics endpoint.
    let metrics: WorkerMetrics
    private let uptime: Uptime

    init(
        router: consuming ZMQSocket, announcer: consuming Announcer, handler: CommandHandler, store: any EventStore,
        clock: any Clock, diagnostics: Diagnostics, maximumBatch: Int, security: ServerSecurity? = nil,
        reloads: WakeUpPipe? = nil, metrics: WorkerMetrics
    ) {
        self.router = router
        self.announcer = announcer
        self.handler = handler
        self.store = store
        self.diagnostics = diagnostics
        self.maximumBatch = maximumBatch
        requestGuard = RequestGuard(security: security)
        self.reloads = reloads
        self.metrics = metrics
        uptime = Uptime(clock)
    }

    /// Serves until the context is shut down.
    mutating func run() {
        while true {
            do {
                var items = [router.readable]
                if let reloads { items.append(reloads.readable) }
                let ready = try ZMQPoll.wait(
                    items, timeoutMilliseconds: announcer.isReady ? -1 : FeedPublisher.rebindRetryMilliseconds)
                if let reloads, ready[1] || !announcer.isReady {
                    reloads.drain()
                    announceReload()
                }
                try serveWaitingRequests()
            } catch {
                if error.isTerminated { return }
                // A socket error other than shutdown concerns one message; keep serving.
                diagnostics.error("command loop: socket error", ["error": error.description])
            }
        }
    }

    /// Tells the announcer the allow-list was reloaded (a feed is bound anew, so every
    /// subscriber is admitted again or refused).
    private mutating func announceReload() {
        do {
            if try announcer.allowListReloaded() {
                diagnostics.info("feed socket bound anew: subscribers reconnect through the allow-list")
            }
        } catch {
            diagnostics.error(
                "feed socket not bound anew; trying again", ["error": error.description])
        }
    }

    private mutating func serveWaitingRequests() throws(ZMQError) {
        var commands: [(request: RoutedRequest, command: CommandRequest)] = []
        var taken = 0
        let started = ContinuousClock.now
        // Every message counts toward the batch, so a flood of other requests cannot keep
        // drained commands waiting.
        while taken < maximumBatch, let message = try router.receiveMessage(wait: false) {
            taken += 1
            let request = RoutedRequest(message)
            switch classify(request) {
            case .command(let command): commands.append((request, command))
            case .reply(let document): try reply(request, document)
            case .drop: break
            }
        }
        guard !commands.isEmpty else { return }
        let outcomes = handler.handle(commands.map(\.command))
        metrics.update {
            $0.record(batchOf: outcomes)
            $0.decidedAgain = handler.commandsDecidedAgain
        }
        var fresh: [RecordedEvent] = []
        for case .accepted(let accepted) in outcomes where !accepted.wasRetry { fresh += accepted.events }
        fresh.sort { $0.position < $1.position }
        // Each new event's envelope is written once, for its reply and for the feed.
        // An event whose envelope cannot be written gets no feed message (subscribers read it
        // from the log) and its reply is the `internal` error naming it.
        var envelopes: [Int64: [UInt8]] = [:]
        for event in fresh { envelopes[event.position] = try? EnvelopeWriter.bytes(event) }
        let announcement = announcer.prepare(fresh, envelopes: envelopes)
        for ((request, command), outcome) in zip(commands, outcomes) {
            try reply(
                request, bytes: WireEncoding.commandReplyBytes(id: command.commandId, outcome, envelopes: envelopes))
        }
        let replied = (ContinuousClock.now - started).seconds
        let published = try announcer.announce(announcement)
        metrics.update {
            $0.commandSeconds.observe(replied, times: outcomes.count)
            $0.published += published
        }
        if outcomes.count > 1 { diagnostics.debug("batch committed", ["commands": "\(outcomes.count)"]) }
    }

    private enum Classified {
        case command(CommandRequest)
        case reply(JSONValue)
        /// From a key no longer listed: no reply at all.
        case drop
    }

    private mutating func classify(_ routed: RoutedRequest) -> Classified {
        guard requestGuard.isListed(routed.metadata) else { return .drop }
        let request: WireRequest
        do {
            request = try routed.wireRequest()
        } catch {
            metrics.update { $0.recordRefusal(code: error.error.code) }
            return .reply(WireEncoding.failure(id: error.id, error.error))
        }
        switch requestGuard.admit(routed.metadata, for: request.type == "Status" ? .status : .command) {
        case .serve: break
        case .drop: return .drop
        case .unauthorized(let error):
            metrics.update { $0.recordRefusal(code: error.code) }
            return .reply(WireEncoding.failure(id: request.id, error))
        }
        do {
            if request.type == "Status" {
                try request.onlyFields(WireRequest.bareFields)
                return .reply(status(id: request.id))
            }
            return .command(try CommandRequest(wire: request))
        } catch {
            metrics.update { $0.recordRefusal(code: error.code) }
            return .reply(WireEncoding.failure(id: request.id, error))
        }
    }

    private func status(id: String) -> JSONValue {
        let status = metrics.read().status(head: try? store.headPosition(), uptimeSeconds: uptime.seconds)
        return WireEncoding.success(id: id, ["result": status.json])
    }

    private func reply(_ request: RoutedRequest, _ document: JSONValue) throws(ZMQError) {
        try reply(request, bytes: JSONWriter.bytes(document))
    }

    private func reply(_ request: RoutedRequest, bytes: [UInt8]) throws(ZMQError) {
        if !(try router.send(request.reply(bytes), wait: false)) {
            diagnostics.debug("reply dropped: the client is gone or not reading")
        }
    }
}
