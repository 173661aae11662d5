import LogbookApplication
import LogbookDomain
import LogbookFeed
import LogbookJSON
import LogbookWire
import LogbookZMQ

/// The groups process's serving thread: the groups ROUTER, per group a follower of the log,
/// and one more `ReadLog` channel for the streams a group reads again; its commits go to a
/// `GroupCommitThread`, which owns no socket. Each turn it takes the outcome of the commit
/// under way if it finished, reads members' and admins' requests, takes the log's next
/// events for every group that has room (`GroupDispatcher.wantsEvents`), reads again the
/// streams whose lanes ran dry, then ends the turn (`GroupDispatcher.endTurn`): the
/// deliveries it returns go out at once (a stream whose last change is not durable yet
/// delivers nothing), the commit it returns goes to the commit thread while the next turns
/// go on, and the turn's replies wait until the commit they depend on is durable, so an
/// acknowledgement is confirmed, and a failure counted, only once it is durable. When a
/// commit fails, every reply waiting is answered `unavailable`, and every group reads the
/// log again from its checkpoint.
///
/// With CURVE on, members need `reader` (or `admin`) and group management and `Status`
/// need `admin` (`RequestGuard`).
struct GroupsLoop: ServingLoop, ~Copyable {
    let router: ZMQSocket
    let context: ZMQContext
    let endpoints: ServiceEndpoints
    let clientKeys: CurveClientKeys?
    let dispatcher: GroupDispatcher
    private var followers: [GroupName: GroupFollower] = [:]
    /// Reads the log's head for new groups, and the streams groups read again.
    private var logReader: LogReadChannel
    let requestGuard: RequestGuard
    let heartbeat: Heartbeat
    let stop: StopRequest
    let diagnostics: Diagnostics
    let metrics: GroupsMetrics
    let clock: any Clock
    let uptime: Uptime
    let idleCatchUpMilliseconds: Int
    private var outbox = ReplyOutbox()
    /// Writes the dispatcher's commits, one at a time.
    private let committer: GroupCommitThread
    /// The last commit whose outcome was taken (durable, or failed and refused).
    private var settledCommit = 0
    /// Replies that wait for a commit to be durable, in the order they were made.
    private var heldReplies: [HeldReply] = []
    /// After a failed read for refills, the next one is no sooner than this.
    private var refillRetryAt: Int64 = 0
    /// The dispatcher's `loads` the followers were last set for.
    private var followersLoad: Int

    /// Requests read in one turn at most.
    static let requestsPerTurn = 1_000
    /// The longest a turn waits for something to happen.
    static let longestWait = 250
    /// How long a group waits after a failed log read before it reads again.
    static let logRetryMilliseconds: Int64 = 1_000
    /// How long a log read may take before it counts as failed.
    static let logTimeoutMilliseconds = 2_000

    init(
        router: consuming ZMQSocket, context: ZMQContext, endpoints: ServiceEndpoints, clientKeys: CurveClientKeys?,
        dispatcher: GroupDispatcher, security: ServerSecurity?, heartbeat: Heartbeat, stop: StopRequest,
        diagnostics: Diagnostics, metrics: GroupsMetrics, clock: any Clock, idleCatchUpMilliseconds: Int,
        openStore: @escaping @Sendable () throws(GroupStoreError) -> any GroupStore, commitHeartbeat: Heartbeat
    ) throws(ZMQError) {
        let reader = try LogReadChannel(
            context, endpoint: endpoints.log, timeoutMilliseconds: Self.logTimeoutMilliseconds, security: clientKeys)
        var followers: [GroupName: GroupFollower] = [:]
        for name in dispatcher.names {
            guard let record = dispatcher.record(of: name) else { continue }
            followers[name] = GroupFollower(
                try Self.makeFollower(
                    context, endpoints, clientKeys, record, cursor: dispatcher.frontier(of: name) ?? record.checkpoint,
                    pageSize: dispatcher.window),
                now: MonotonicClock.milliseconds())
        }
        // Last of what throws, so the thread never outlives a loop that was not made.
        let committer = try GroupCommitThread(openStore: openStore, heartbeat: commitHeartbeat)
        self.router = router
        self.context = context
        self.endpoints = endpoints
        self.clientKeys = clientKeys
        self.dispatcher = dispatcher
        self.followers = followers
        logReader = reader
        requestGuard = RequestGuard(security: security)
        self.heartbeat = heartbeat
        self.stop = stop
        self.diagnostics = diagnostics
        self.metrics = metrics
        self.clock = clock
        uptime = Uptime(clock)
        self.idleCatchUpMilliseconds = idleCatchUpMilliseconds
        followersLoad = dispatcher.loads
        self.committer = committer
    }

    mutating func run() {
        defer { committer.stop() }
        while true {
            do {
                let names = followers.keys.filter {
                    dispatcher.wantsEvents($0) && followers[$0]?.follower.needsCatchUp == false
                }
                var items = [router.readable, stop.readable, committer.finished.readable]
                for name in names { if let box = followers[name] { items.append(box.follower.readable) } }
                let ready = try ZMQPoll.wait(items, timeoutMilliseconds: heartbeat.pollTimeout(waitMilliseconds()))
                heartbeat.beat()
                try outbox.flush(on: router)
                if stop.isRequested { return try finish() }
                let now = MonotonicClock.milliseconds()
                if let finished = committer.takeFinished() { try settle(finished, now: now) }
                var replies: [(routed: RoutedRequest, id: String?, reply: JSONValue)] = []
                var taken = 0
                while taken < Self.requestsPerTurn, let message = try router.receiveMessage(wait: false) {
                    taken += 1
                    let routed = RoutedRequest(message)
                    if let answer = serve(routed, now: now) { replies.append((routed, answer.id, answer.reply)) }
                }
                let readable = Set(zip(names, ready.dropFirst(3)).filter(\.1).map(\.0))
                takeEvents(readable: readable)
                refillLanes()
                var deliveries: [GroupDelivery] = []
                var waitFor = settledCommit
                do {
                    let turn = try dispatcher.endTurn(now: now)
                    deliveries = turn.deliveries
                    waitFor = turn.repliesWaitFor
                    if let commit = turn.commit { committer.submit(commit) }
                } catch {
                    diagnostics.error(
                        "groups: the group store failed; the turn's requests are refused", ["error": "\(error)"])
                    let refusal = ServiceError(.unavailable, "the group store is unavailable; try again")
                    replies = replies.map { ($0.routed, $0.id, WireEncoding.failure(id: $0.id, refusal)) }
                }
                if dispatcher.loads != followersLoad { resetFollowers() }
                // Figures before replies: whoever reads a reply finds the metrics as new as it.
                publishFigures()
                for (routed, id, reply) in replies {
                    if waitFor <= settledCommit {
                        try send(routed.reply(JSONWriter.bytes(reply)))
                    } else {
                        heldReplies.append(HeldReply(waitFor: waitFor, routed: routed, id: id, reply: reply))
                    }
                }
                // A delivery to a member whose connection is gone is never made: it is taken
                // back without counting as an attempt (else a killed member would cost each
                // event it held one attempt more: the one handed back to it, still taken for
                // a member, when the real one expired); then the member leaves.
                var gone: Set<MemberId> = []
                for delivery in deliveries {
                    if !gone.contains(delivery.member) {
                        let frames = [delivery.member.bytes, [], GroupDocuments.deliver(delivery)]
                        guard try outbox.send(frames, on: router) == .gone else { continue }
                    }
                    dispatcher.unsent(delivery)
                    gone.insert(delivery.member)
                }
                for member in gone { dispatcher.disconnected(member) }
            } catch {
                if error.isTerminated { return }
                diagnostics.error("groups loop: socket error", ["error": "\(error)"])
            }
        }
    }

    // MARK: Commits

    /// A reply made at a turn whose changes (or an earlier turn's) are not durable yet.
    private struct HeldReply {
        let waitFor: Int
        let routed: RoutedRequest
        let id: String?
        let reply: JSONValue
    }

    /// Takes a commit's outcome: once durable, the replies that waited for it go and the
    /// streams it held deliver again; once failed, every reply waiting is refused, the
    /// groups are read back from the store and every group reads the log again.
    private mutating func settle(_ finished: GroupCommitThread.Finished, now: Int64) throws(ZMQError) {
        settledCommit = finished.commit.sequence
        guard let failure = finished.failure else {
            dispatcher.committed(finished.commit)
            try releaseHeldReplies(through: settledCommit)
            return
        }
        diagnostics.error(
            "groups: the group store failed; the requests waiting for it are refused", ["error": "\(failure)"])
        do {
            try dispatcher.commitFailed(failure, now: now)
        } catch let error where error == failure {
            // The groups were read back from the store; `commitFailed` throws the commit's failure.
        } catch {
            diagnostics.error(
                "groups: the groups could not be read back from the store; requests are refused until they can",
                ["error": "\(error)"])
        }
        // First, so that no later turn takes the log's events past the checkpoints read back.
        if dispatcher.loads != followersLoad { resetFollowers() }
        try refuseHeldReplies(ServiceError(.unavailable, "the group store is unavailable; try again"))
    }

    /// Answers every held reply with `refusal` instead, in the order they were made.
    private mutating func refuseHeldReplies(_ refusal: ServiceError) throws(ZMQError) {
        let refused = heldReplies
        heldReplies = []
        for held in refused {
            try send(held.routed.reply(JSONWriter.bytes(WireEncoding.failure(id: held.id, refusal))))
        }
    }

    /// Sends the held replies that wait for no commit after `sequence`, in the order they were made.
    private mutating func releaseHeldReplies(through sequence: Int) throws(ZMQError) {
        let ready = heldReplies.prefix { $0.waitFor <= sequence }
        heldReplies.removeFirst(ready.count)
        for held in ready { try send(held.routed.reply(JSONWriter.bytes(held.reply))) }
    }

    /// How long the poll may wait: until the next deadline, a group's idle read, or a retry;
    /// not at all while streams wait to be read again from the log.
    private func waitMilliseconds() -> Int {
        let now = MonotonicClock.milliseconds()
        if dispatcher.needsRefills && refillRetryAt <= now { return 0 }
        var wait = Int64(Self.longestWait)
        if let deadline = dispatcher.nextDeadline() { wait = min(wait, max(0, deadline - now)) }
        if outbox.pollTimeout >= 0 { wait = min(wait, Int64(outbox.pollTimeout)) }
        for (name, box) in followers where dispatcher.wantsEvents(name) && box.follower.needsCatchUp {
            wait = min(wait, max(0, box.retryAt - now))
        }
        return Int(wait)
    }

    // MARK: The log

    /// A follower of the log for a group, from `cursor` (its frontier), reading pages of
    /// `pageSize` events (the group's window) while it catches up.
    private static func makeFollower(
        _ context: ZMQContext, _ endpoints: ServiceEndpoints, _ clientKeys: CurveClientKeys?, _ record: GroupRecord,
        cursor: Int64, pageSize: Int
    ) throws(ZMQError) -> FeedFollower {
        try FeedFollower(
            context, feed: endpoints.feed, log: endpoints.log,
            topics: record.categories.compactMap { FeedTopic(category: $0) }, cursor: cursor,
            logTimeoutMilliseconds: Self.logTimeoutMilliseconds, pageSize: pageSize, security: clientKeys)
    }

    /// Hands each group with room the events its follower has: a page of the log while it
    /// catches up, or the live messages waiting; a group quiet for too long reads the log
    /// once (a lost last feed message has nothing after it to reveal it). Once one read
    /// finds the log away, the other groups wait for the retry too: each read would block
    /// the one thread for the log's whole timeout, and members' messages with it.
    private mutating func takeEvents(readable: Set<GroupName>) {
        var logAway = false
        for (name, box) in followers where dispatcher.wantsEvents(name) {
            let now = MonotonicClock.milliseconds()
            if logAway {
                box.retryAt = max(box.retryAt, now + Self.logRetryMilliseconds)
                continue
            }
            if !box.follower.needsCatchUp, !readable.contains(name) {
                guard now - box.lastHeard >= Int64(idleCatchUpMilliseconds) else { continue }
                box.follower.requestCatchUp()
            }
            guard box.retryAt <= now else { continue }
            do {
                let batch: (events: [PendingEvent], through: Int64)
                if let (page, through) = try box.follower.nextLogPage() {
                    batch = (pendingEvents(page), through)
                    box.follower.recycle(page)
                } else {
                    let next = try box.follower.next()
                    batch = (pendingEvents(next.events), next.through)
                }
                box.lastHeard = now
                do {
                    try dispatcher.offer(batch.events, through: batch.through, to: name)
                } catch {
                    // The outcomes could not be read: nothing was taken; read the log again.
                    box.follower.reset(cursor: dispatcher.frontier(of: name) ?? 0)
                    box.retryAt = now + Self.logRetryMilliseconds
                    diagnostics.warning(
                        "groups: cannot read the group store", ["group": name.rawValue, "error": "\(error)"])
                }
            } catch {
                logAway = true
                box.retryAt = now + Self.logRetryMilliseconds
                box.follower.requestCatchUp()
                diagnostics.warning("groups: cannot read the log", ["group": name.rawValue, "error": "\(error)"])
            }
        }
    }

    /// A page of the log as a group holds its events: a page kept as the bytes it came in
    /// gives each envelope as those bytes, without decoding it and writing it again.
    private func pendingEvents(_ page: FetchedLogPage) -> [PendingEvent] {
        guard let encoded = page.encoded else { return pendingEvents(page.recordedEvents() ?? []) }
        var events: [PendingEvent] = []
        events.reserveCapacity(encoded.count)
        for event in encoded.events {
            if let envelope = encoded.envelope(of: event) {
                events.append(PendingEvent(position: event.position, stream: envelope.stream, payload: envelope.bytes))
            } else if let recorded = encoded.recordedEvent(event) {
                events += pendingEvents([recorded])
            } else {
                diagnostics.error(
                    "groups: an event of the log cannot be read as an envelope", ["position": "\(event.position)"])
            }
        }
        return events
    }

    /// The events as a group holds them, each with the envelope a member receives.
    private func pendingEvents(_ events: [RecordedEvent]) -> [PendingEvent] {
        events.compactMap { event -> PendingEvent? in
            do {
                return PendingEvent(
                    position: event.position, stream: event.stream, payload: try EnvelopeWriter.bytes(event))
            } catch {
                diagnostics.error(
                    "groups: an event cannot be written as an envelope",
                    ["position": "\(event.position)", "error": "\(error)"])
                return nil
            }
        }
    }

    /// Reads the log again for the streams whose lanes ran dry while it holds more of their
    /// events: per group and turn, one page of the group's topics from the earliest position
    /// those lanes need, shared by all of them. A failed read leaves the lanes as they are,
    /// to be read at a later turn.
    private mutating func refillLanes() {
        guard refillRetryAt <= MonotonicClock.milliseconds() else { return }
        for refill in dispatcher.refillsNeeded {
            let topics = refill.categories.compactMap { FeedTopic(category: $0) }
            let limit = Int(min(Int64(dispatcher.window), max(1, refill.through - refill.after)))
            do {
                // Every topic: the whole log, which the worker reads fastest.
                let asked = Set(topics) == Set(FeedTopic.allCases) ? nil : topics
                let page = try logReader.read(from: refill.after + 1, limit: limit, topics: asked)
                let events = page.events.filter { refill.streams.contains($0.stream) && $0.position <= refill.through }
                dispatcher.refill(refill, with: pendingEvents(events), readThrough: page.next - 1)
            } catch {
                diagnostics.warning(
                    "groups: cannot read the log again for a group's streams",
                    ["group": refill.group.rawValue, "error": "\(error)"])
                refillRetryAt = MonotonicClock.milliseconds() + Self.logRetryMilliseconds
                return
            }
        }
    }

    /// After the dispatcher read the groups from the store again (a failed commit), it holds
    /// what the store holds: every follower goes back to its group's frontier (its
    /// checkpoint), and a group the store does not hold loses its follower.
    private mutating func resetFollowers() {
        followersLoad = dispatcher.loads
        for (name, box) in followers {
            guard let frontier = dispatcher.frontier(of: name) else {
                followers.removeValue(forKey: name)
                continue
            }
            box.follower.reset(cursor: frontier)
        }
    }

    private mutating func head() throws(ServiceError) -> Int64 {
        do {
            return try logReader.read(from: 1, limit: 1, topics: nil).head
        } catch {
            throw ServiceError(.unavailable, "the log cannot be read to find its head; try again")
        }
    }

    // MARK: Requests

    /// The reply to one request, or nil when it gets none (a revoked key, a client over its
    /// reply budget).
    private mutating func serve(_ routed: RoutedRequest, now: Int64) -> (id: String?, reply: JSONValue)? {
        guard requestGuard.isListed(routed.metadata), !outbox.isOverBudget(routed.route) else { return nil }
        let wire: WireRequest
        do {
            wire = try routed.wireRequest()
        } catch {
            return (error.id, WireEncoding.failure(id: error.id, error.error))
        }
        // An unknown type is answered as such whoever asks: it asks for no right.
        guard let type = GroupRequestType(rawValue: wire.type) else {
            return (wire.id, WireEncoding.failure(id: wire.id, GroupRequest.unknownType(wire.type)))
        }
        switch requestGuard.admit(routed.metadata, for: type.managesGroups ? .manageGroups : .consume) {
        case .serve: break
        case .drop: return nil
        case .unauthorized(let error): return (wire.id, WireEncoding.failure(id: wire.id, error))
        }
        do {
            let request = try GroupRequest(wire: wire)
            let member = MemberId(routed.route.first ?? [])
            let result = try answer(request, member: member, now: now)
            return (wire.id, WireEncoding.success(id: wire.id, ["result": result]))
        } catch {
            return (wire.id, WireEncoding.failure(id: wire.id, error))
        }
    }

    private mutating func answer(_ request: GroupRequest, member: MemberId, now: Int64) throws(ServiceError)
        -> JSONValue
    {
        switch request {
        case .join(let name, let maxInFlight):
            try dispatcher.join(name, member: member, now: now, maxInFlight: maxInFlight)
            let groupLimit = dispatcher.record(of: name)?.settings.maxInFlight ?? 0
            return [
                "group": .string(name.rawValue), "heartbeatMs": .int(Int(dispatcher.memberTimeoutMilliseconds / 5)),
                "memberTimeoutMs": .int(Int(dispatcher.memberTimeoutMilliseconds)),
                "maxInFlight": .int(min(groupLimit, maxInFlight ?? groupLimit)),
            ]
        case .heartbeat(let name):
            try dispatcher.heartbeat(name, member: member, now: now)
            return ["group": .string(name.rawValue)]
        case .leave(let name):
            try dispatcher.leave(name, member: member)
            return ["group": .string(name.rawValue)]
        case .ack(let name, let positions):
            let outcome = try dispatcher.ack(positions, in: name, from: member, now: now)
            return [
                "group": .string(name.rawValue), "acked": .array(outcome.acked.map { .int(Int($0)) }),
                "stale": .array(outcome.stale.map { .int(Int($0)) }),
            ]
        case .nack(let name, let position, let reason):
            try dispatcher.nack(position, in: name, from: member, reason: reason, now: now)
            return ["group": .string(name.rawValue), "position": .int(Int(position))]
        case .create(let creation):
            guard dispatcher.record(of: creation.name) == nil else {
                throw ServiceError(
                    .alreadyExists, "a group named \(creation.name) exists already",
                    details: [("group", .string(creation.name.rawValue))])
            }
            // The log's head now: where a group from the head starts, and what a new group's
            // document shows until its follower has read (unknown, 0, while the log is away).
            let logHead = creation.fromHead ? try head() : (try? head()) ?? 0
            let checkpoint = creation.fromHead ? logHead : 0
            let record = GroupRecord(
                name: creation.name, categories: creation.categories, settings: creation.settings,
                createdAt: clock.now().millisecondsSinceEpoch, checkpoint: checkpoint)
            let follower: GroupFollower
            do {
                follower = GroupFollower(
                    try Self.makeFollower(
                        context, endpoints, clientKeys, record, cursor: checkpoint, pageSize: dispatcher.window),
                    now: now)
                follower.headAtCreation = logHead
            } catch {
                throw ServiceError(.unavailable, "cannot follow the log for the new group: \(error)")
            }
            try dispatcher.create(record)
            followers[record.name] = follower
            return try document(of: record.name)
        case .list:
            var documents: [JSONValue] = []
            for name in dispatcher.names { documents.append(try document(of: name)) }
            return ["groups": .array(documents)]
        case .show(let name):
            return try document(of: name)
        case .delete(let name):
            try dispatcher.delete(name)
            followers.removeValue(forKey: name)
            return ["group": .string(name.rawValue), "deleted": true]
        case .parked(let name, let limit):
            var events: [JSONValue] = []
            for event in try dispatcher.parked(in: name, limit: limit) {
                events.append(try GroupDocuments.parked(event))
            }
            return ["group": .string(name.rawValue), "events": .array(events)]
        case .retry(let name, let position):
            try dispatcher.retry(position, in: name)
            return ["group": .string(name.rawValue), "position": .int(Int(position))]
        case .skip(let name, let position):
            try dispatcher.skip(position, in: name)
            return ["group": .string(name.rawValue), "position": .int(Int(position))]
        case .status:
            var documents: [JSONValue] = []
            for name in dispatcher.names { documents.append(try document(of: name)) }
            return ["role": "groups", "uptimeSeconds": .int(Int(uptime.seconds)), "groups": .array(documents)]
        }
    }

    private func document(of name: GroupName) throws(ServiceError) -> JSONValue {
        let summary = try dispatcher.summary(of: name)
        return GroupDocuments.group(summary, head: knownHead(of: name, summary.record))
    }

    private func knownHead(of name: GroupName, _ record: GroupRecord) -> Int64 {
        let frontier = dispatcher.frontier(of: name) ?? record.checkpoint
        guard let box = followers[name] else { return frontier }
        return max(box.follower.lastKnownHead, box.headAtCreation, frontier)
    }

    private func publishFigures() {
        var figures: [GroupsMetrics.GroupFigures] = []
        for name in dispatcher.names {
            guard let summary = try? dispatcher.summary(of: name) else { continue }
            figures.append(.init(summary: summary, head: knownHead(of: name, summary.record)))
        }
        metrics.publish(figures)
    }

    // MARK: Sockets

    private mutating func send(_ frames: [[UInt8]]) throws(ZMQError) {
        try outbox.send(frames, on: router, reportingDropOf: "groups reply", to: diagnostics)
    }

    /// A clean stop: lets the commit under way finish, and one more for the replies that
    /// waited behind it (those still waiting then are refused), hands on the replies still
    /// waiting, then closes with a linger.
    private mutating func finish() throws(ZMQError) {
        for _ in 0..<2 where dispatcher.isCommitting || !heldReplies.isEmpty {
            let now = MonotonicClock.milliseconds()
            if dispatcher.isCommitting {
                guard let finished = committer.waitForFinished(milliseconds: StopRequest.drainMilliseconds) else {
                    break
                }
                try settle(finished, now: now)
            }
            guard !heldReplies.isEmpty else { continue }
            do {
                if let commit = try dispatcher.endTurn(now: now).commit { committer.submit(commit) }
            } catch {
                diagnostics.error("groups: the group store failed while stopping", ["error": "\(error)"])
            }
        }
        try refuseHeldReplies(ServiceError(.unavailable, "the groups process is stopping; try again"))
        try outbox.drain(on: router, forMilliseconds: StopRequest.drainMilliseconds)
        try router.set(.linger, Int32(StopRequest.drainMilliseconds))
        diagnostics.info("groups loop stopped", ["groups": "\(dispatcher.names.count)"])
    }
}
