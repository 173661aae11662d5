import Glibc
import LogbookApplication
import LogbookDomain
import LogbookJSON
import LogbookMetrics
import LogbookWire
import LogbookZMQ

/// The worker's command loop, the first stage of its command pipeline, on the thread that
/// owns the commands ROUTER and the announcer's socket: it reads and checks every request
/// waiting (up to `maximumBatch` commands), hands them as one batch to the `CommitStage`
/// (which decides them in arrival order against current state and appends them in one group
/// commit on a thread of its own), and while that batch is committed it reads the next
/// requests and delivers the previous batch: a reply to each command, then the new events
/// announced in position order: published (`FeedPublisher`, SQLite) or hinted to the feed
/// processes (`CommitHints`, PostgreSQL), whichever `Announcer` it was given. No reply
/// leaves before its batch is durable; batches are delivered in the order they committed.
/// A few commands read while the stage is idle are decided, appended and synced on this
/// thread instead (`CommitStage.runInline`): at a quiet moment nothing would overlap them,
/// and a lone command saves the hand-over to the stage's thread and back.
/// A client that vanished before its reply costs nothing: its reply is dropped. A client
/// that does not read its replies pins at most its `ReplyOutbox` budget and the socket's
/// reply queue (`ServerSockets.ReplyQueue.commands`), and once over that budget its requests
/// are dropped unread until it reads; others are served meanwhile.
///
/// When `stop` is requested it takes no new request: the batch in the stage and the
/// commands already read are committed and replied to and their events announced, the
/// replies still waiting are handed on (at most `StopRequest.drainMilliseconds`), and the
/// sockets close with a linger of that bound.
///
/// With CURVE on, each request is checked against its sender's current role (`RequestGuard`):
/// commands need `writer` (or `admin`), `Status` needs `admin`; and after each reload of the
/// allow-list the announcer is told (`allowListReloaded`: the feed socket is bound anew, so
/// revoked subscribers are cut off).
struct CommandLoop<Announcer: CommitAnnouncer & ~Copyable>: ServingLoop, ~Copyable {
    let router: ZMQSocket
    var announcer: Announcer
    let commits: CommitStage
    /// The log's head for `Status` (the durable head, on a deferred-sync SQLite log), read
    /// through a connection of the loop's own: never the commit stage's, which is held for a
    /// whole commit (with `synchronous=FULL` its fsync, or a wait of seconds for another
    /// writer's lock), so `Status` answers while a batch commits or hangs.
    let headReads: any EventStore
    let diagnostics: Diagnostics
    let maximumBatch: Int
    let requestGuard: RequestGuard
    /// Readable after each reload of the allow-list (nil with security off).
    let reloads: WakeUpPipe?
    /// Checked in on every turn, for the supervisor's watchdog.
    let heartbeat: Heartbeat
    let stop: StopRequest?
    private var outbox = ReplyOutbox()
    /// Commands read and checked, not yet handed to the stage, and when the first was read.
    private var waiting: [(request: RoutedRequest, command: CommandRequest)] = []
    private var waitingSince = ContinuousClock.now
    /// The batches in the stage, oldest first, each with when its first command was read.
    private var inStage:
        [(batch: [(request: RoutedRequest, command: CommandRequest)], since: ContinuousClock.Instant)] =
            []
    /// The loop's statistics, shared with `Status` and the metrics endpoint.
    let metrics: WorkerMetrics
    private let uptime: Uptime

    init(
        router: consuming ZMQSocket, announcer: consuming Announcer, commits: CommitStage, headReads: any EventStore,
        clock: any Clock, diagnostics: Diagnostics, maximumBatch: Int, security: ServerSecurity? = nil,
        reloads: WakeUpPipe? = nil, heartbeat: Heartbeat = Heartbeat(), stop: StopRequest? = nil,
        metrics: WorkerMetrics
    ) {
        self.heartbeat = heartbeat
        self.stop = stop
        self.router = router
        self.announcer = announcer
        self.commits = commits
        self.headReads = headReads
        self.diagnostics = diagnostics
        self.maximumBatch = maximumBatch
        requestGuard = RequestGuard(security: security)
        self.reloads = reloads
        self.metrics = metrics
        uptime = Uptime(clock)
    }

    /// Serves until the context is shut down or `stop` is requested; the stage's thread ends with it.
    mutating func run() {
        defer { commits.stop() }
        while true {
            do {
                // Requests are read only while there is room for them in the next batch: a
                // flood waits in libzmq's queue (bounded) instead of this process's memory.
                var items = [commits.finished.readable]
                let reading = waiting.count < maximumBatch
                if reading { items.append(router.readable) }
                if let reloads { items.append(reloads.readable) }
                if let stop { items.append(stop.readable) }
                let ready = try ZMQPoll.wait(
                    items,
                    timeoutMilliseconds: heartbeat.pollTimeout(
                        PollTimeout.earliest(
                            announcer.isReady ? -1 : FeedPublisher.rebindRetryMilliseconds, outbox.pollTimeout)))
                heartbeat.beat()
                if let reloads, ready[reading ? 2 : 1] || !announcer.isReady {
                    reloads.drain()
                    announceReload()
                }
                try outbox.flush(on: router)
                if let stop, stop.isRequested { return try finish() }
                if reading { try readWaitingRequests() }
                // Taken after the reading, which may throw: outcomes taken are always delivered
                // (an untaken batch leaves the pipe readable for the next turn).
                var delivered = matched(ready[0] ? commits.takeFinished() : [])
                if mayRunInline {
                    // Durable already: their replies do not wait for the inline batch's sync.
                    try deliver(delivered)
                    delivered = []
                }
                if let inline = runWaitingInline() {
                    delivered.append(inline)
                } else {
                    // The stage takes the next batch before these are delivered, so its commit
                    // overlaps the writing and sending below.
                    submitWaiting()
                }
                try deliver(delivered)
            } catch {
                if error.isTerminated { return }
                // A socket error other than shutdown concerns one message; keep serving.
                diagnostics.error("command loop: socket error", ["error": error.description])
            }
        }
    }

    /// A clean stop: commits and delivers the batch in the stage and the commands already
    /// read, hands on the replies still waiting, then lets libzmq deliver what it holds
    /// (replies and feed messages) while the sockets close.
    private mutating func finish() throws(ZMQError) {
        for _ in 0..<2 {
            try deliver(matched(inStage.isEmpty ? [] : commits.waitForFinished()))
            submitWaiting()
        }
        commits.stop()
        try outbox.drain(on: router, forMilliseconds: StopRequest.drainMilliseconds)
        // The last replies are handed on; the connections stay open a moment so that clients
        // read them: closed at once, with clients' next requests arriving unread, a whole
        // batch's replies were lost (CleanStopTests: 3 runs in 5, up to 27 commands).
        usleep(UInt32(StopRequest.replyGraceMilliseconds) * 1_000)
        try router.set(.linger, Int32(StopRequest.drainMilliseconds))
        try announcer.finish(lingering: StopRequest.drainMilliseconds)
        diagnostics.info("command loop stopped", ["undelivered": "\(outbox.waitingCount)"])
    }

    /// Hands the commands read so far to the stage: to the batch it was handed last, while
    /// that waits to be taken and has room (`CommitStage.join`), else as a batch of their
    /// own when its append thread is free.
    private mutating func submitWaiting() {
        guard !waiting.isEmpty else { return }
        if !inStage.isEmpty, commits.join(waiting.map(\.command), upTo: maximumBatch) {
            inStage[inStage.count - 1].batch += waiting
            waiting = []
            return
        }
        guard commits.acceptsBatch else { return }
        commits.submit(waiting.map(\.command))
        inStage.append((waiting, waitingSince))
        waiting = []
    }

    /// The commands read so far are few and the stage has none of this loop's batches: they
    /// may run inline (`CommitStage.runInline` has the last word).
    private var mayRunInline: Bool {
        CommitStage.Rules.mayRunInline(commands: waiting.count, inFlight: inStage.count)
    }

    /// Runs the commands read so far to completion on this thread when they are few and the
    /// stage is idle (`CommitStage.runInline`): the batch finished, after any the stage gave back.
    private mutating func runWaitingInline() -> FinishedBatch? {
        guard mayRunInline, let finished = commits.runInline(waiting.map(\.command)) else {
            return nil
        }
        defer { waiting = [] }
        return (finished, waiting, waitingSince)
    }

    /// The finished batches with the requests they answer, which leave `inStage` (the stage
    /// returns them in the order they were submitted).
    private mutating func matched(_ finished: [CommitStage.Finished]) -> [FinishedBatch] {
        precondition(finished.count <= inStage.count, "the commit stage returned a batch it was not given")
        let matched = zip(finished, inStage.prefix(finished.count)).map { ($0, $1.batch, $1.since) }
        inStage.removeFirst(finished.count)
        return matched
    }

    /// A finished batch, its requests, and when the first of them was read.
    private typealias FinishedBatch = (
        CommitStage.Finished, [(request: RoutedRequest, command: CommandRequest)], ContinuousClock.Instant
    )

    /// Delivers finished batches, oldest first. A socket error ends the delivery of the batch
    /// it hit, not of the later ones (whose feed messages move the feed's marks on); the
    /// first such error is thrown once all were tried.
    private mutating func deliver(_ batches: [FinishedBatch]) throws(ZMQError) {
        var firstError: ZMQError?
        for (finished, batch, since) in batches {
            do {
                try deliver(finished, of: batch, since: since)
            } catch {
                firstError = firstError ?? error
            }
        }
        if let firstError { throw firstError }
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

    /// Reads every request waiting, up to room for `maximumBatch` commands: commands wait for
    /// the stage; anything else (errors, `Status`) is answered at once.
    private mutating func readWaitingRequests() throws(ZMQError) {
        var taken = 0
        // Every message counts toward the batch, so a flood of other requests cannot keep
        // read commands waiting.
        while taken + waiting.count < maximumBatch, let message = try router.receiveMessage(wait: false) {
            taken += 1
            let request = RoutedRequest(message)
            switch classify(request) {
            case .command(let command):
                if waiting.isEmpty { waitingSince = .now }
                waiting.append((request, command))
            case .reply(let document): try reply(request, document)
            case .drop: break
            }
        }
    }

    /// Replies to each command of a committed batch and announces its new events: each
    /// command's right after its reply, in position order, when the announcer publishes a
    /// feed; else the batch's after every reply.
    private mutating func deliver(
        _ finished: CommitStage.Finished, of batch: [(request: RoutedRequest, command: CommandRequest)],
        since started: ContinuousClock.Instant
    ) throws(ZMQError) {
        let outcomes = finished.outcomes
        logStoreFailures(outcomes)
        metrics.update {
            $0.record(batchOf: outcomes)
            $0.decidedAgain = finished.commandsDecidedAgain
        }
        // Each command's new events (none for a retry or a refusal), and each new event's
        // envelope written once, for its reply and for the feed. An event whose envelope cannot
        // be written gets no feed message (subscribers read it from the log) and its reply is
        // the `internal` error naming it.
        let fresh: [[RecordedEvent]] = outcomes.map { outcome in
            guard case .accepted(let accepted) = outcome, !accepted.wasRetry else { return [] }
            return accepted.events
        }
        var envelopes: [Int64: [UInt8]] = [:]
        for events in fresh { for event in events { envelopes[event.position] = try? EnvelopeWriter.bytes(event) } }
        var published = 0
        if Announcer.announcesEachCommand {
            // In position order (a command decided again commits after later ones), so that
            // the feed goes out in position order too.
            let order = fresh.indices.sorted { (fresh[$0].first?.position ?? 0) < (fresh[$1].first?.position ?? 0) }
            var prepared = 0
            do {
                for index in order {
                    try reply(to: batch[index], outcomes[index], envelopes: envelopes)
                    prepared += 1
                    guard !fresh[index].isEmpty else { continue }
                    published += try announcer.announce(announcer.prepare(fresh[index], envelopes: envelopes))
                }
            } catch {
                // The feed's marks move past every committed event even when its message is
                // not sent, so that the next message of its topic shows subscribers the hole.
                for index in order[prepared...] where !fresh[index].isEmpty {
                    _ = announcer.prepare(fresh[index], envelopes: envelopes)
                }
                throw error
            }
        } else {
            let announcement = announcer.prepare(
                fresh.joined().sorted { $0.position < $1.position }, envelopes: envelopes)
            for index in batch.indices { try reply(to: batch[index], outcomes[index], envelopes: envelopes) }
            published = try announcer.announce(announcement)
        }
        let replied = (ContinuousClock.now - started).seconds
        metrics.update {
            $0.commandSeconds.observe(replied, times: outcomes.count)
            $0.published += published
        }
        if outcomes.count > 1 { diagnostics.debug("batch committed", ["commands": "\(outcomes.count)"]) }
    }

    private mutating func reply(
        to entry: (request: RoutedRequest, command: CommandRequest), _ outcome: CommandOutcome,
        envelopes: [Int64: [UInt8]]
    ) throws(ZMQError) {
        try reply(
            entry.request,
            bytes: WireEncoding.commandReplyBytes(id: entry.command.commandId, outcome, envelopes: envelopes))
    }

    /// Says in the process log what clients are not told of a store's failure (the path,
    /// SQLite's own words): once per batch, with how many commands it refused.
    private func logStoreFailures(_ outcomes: [CommandOutcome]) {
        var failed: [ServiceError] = []
        for case .rejected(let error) in outcomes where error.serverDetail != nil { failed.append(error) }
        guard let first = failed.first, let detail = first.serverDetail else { return }
        diagnostics.warning("commands refused: the event log failed", ["error": detail, "commands": "\(failed.count)"])
    }

    private enum Classified {
        case command(CommandRequest)
        case reply(JSONValue)
        /// From a key no longer listed, or a client over its reply budget: no reply at all.
        case drop
    }

    private mutating func classify(_ routed: RoutedRequest) -> Classified {
        guard requestGuard.isListed(routed.metadata) else { return .drop }
        // A client that does not read its replies gets nothing done until it reads: its
        // commands are not decided (it sends them again with their ids once it reads).
        guard !outbox.isOverBudget(routed.route) else { return .drop }
        let request: WireRequest
        do {
            request = try routed.wireRequest()
        } catch {
            metrics.update { $0.recordRefusal(code: error.error.code) }
            return .reply(WireEncoding.failure(id: error.id, error.error))
        }
        let action: BusAction =
            switch request.type {
            case "Status": .status
            case "ForgetUser": .forget
            default: .command
            }
        switch requestGuard.admit(routed.metadata, for: action) {
        case .serve: break
        case .drop: return .drop
        case .unauthorized(let error):
            metrics.update { $0.recordRefusal(code: error.code) }
            return .reply(WireEncoding.failure(id: request.id, error))
        }
        do {
            if request.requestType == .status {
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
        let status = metrics.read().status(head: try? headReads.headPosition(), uptimeSeconds: uptime.seconds)
        return WireEncoding.success(id: id, ["result": status.json])
    }

    private mutating func reply(_ request: RoutedRequest, _ document: JSONValue) throws(ZMQError) {
        try reply(request, bytes: JSONWriter.bytes(document))
    }

    private mutating func reply(_ request: RoutedRequest, bytes: [UInt8]) throws(ZMQError) {
        try outbox.send(request.reply(bytes), on: router, reportingDropOf: "reply", to: diagnostics)
    }
}
