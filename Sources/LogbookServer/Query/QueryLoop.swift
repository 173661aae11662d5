import LogbookApplication
import LogbookJSON
import LogbookWire
import LogbookZMQ

/// The query process's query thread: serves the queries ROUTER. It reads requests, hands
/// each event to the rules (`ParkedQueries` for queries whose `minPosition` is not reached,
/// `RebuildRequests` for `Rebuild`), and turns what they decide into replies and requests
/// to the other threads. Queries are answered from `GenerationReader`; `Status` and
/// `Rebuild` are answered with the `QueryStatus` of the state as it is now.
///
/// With CURVE on, queries need `reader` (or `admin`), `Status` and `Rebuild` need `admin`
/// (`RequestGuard`); a revoked key gets no reply, and a parked query of a key revoked
/// while it waited is answered all the same (it was admitted when it came).
///
/// Replies go through a `ReplyOutbox`: a client that does not read pins a bounded number of
/// bytes, and once over its budget its requests are dropped unread until it reads. When
/// `stop` is requested it takes no new request, hands on the replies waiting (bounded) and
/// closes with a linger; queries still parked get nothing. A turn reads at most
/// `requestsPerTurn` requests, so a steady stream of them cannot keep the loop from its
/// heartbeat, its stop or its parked queries' deadlines.
struct QueryLoop: ServingLoop, ~Copyable {
    typealias Snapshot = QueryProcessState.Snapshot

    let router: ZMQSocket
    var reader: GenerationReader
    let state: QueryProcessState
    let startRebuild: () -> Void
    let uptime: Uptime
    let diagnostics: Diagnostics
    let requestGuard: RequestGuard
    /// Checked in on every turn, for the supervisor's watchdog.
    let heartbeat: Heartbeat
    let stop: StopRequest?
    private var outbox = ReplyOutbox()
    private var parked = ParkedQueries<RoutedRequest>()
    private var rebuilds = RebuildRequests()
    /// The thread's counters, shared with `Status` and the metrics endpoint.
    let metrics: QueryMetrics

    init(
        router: consuming ZMQSocket, reader: GenerationReader, state: QueryProcessState,
        startRebuild: @escaping () -> Void, clock: any Clock, diagnostics: Diagnostics, security: ServerSecurity? = nil,
        heartbeat: Heartbeat = Heartbeat(), stop: StopRequest? = nil, metrics: QueryMetrics
    ) {
        self.heartbeat = heartbeat
        self.stop = stop
        self.metrics = metrics
        requestGuard = RequestGuard(security: security)
        self.router = router
        self.reader = reader
        self.state = state
        self.startRebuild = startRebuild
        self.diagnostics = diagnostics
        uptime = Uptime(clock)
    }

    /// Requests read in one turn at most; more waiting make the next poll return at once.
    static let requestsPerTurn = 1_000

    mutating func run() {
        while true {
            do {
                let timeout = heartbeat.pollTimeout(
                    PollTimeout.earliest(parked.pollTimeout(now: MonotonicClock.milliseconds()), outbox.pollTimeout))
                var items = [router.readable, state.queryWake.readable]
                if let stop { items.append(stop.readable) }
                let ready = try ZMQPoll.wait(items, timeoutMilliseconds: timeout)
                heartbeat.beat()
                if ready[1] { state.queryWake.drain() }
                try outbox.flush(on: router)
                if let stop, stop.isRequested { return try finish() }
                // One snapshot per turn: answering from it with a reader of another
                // generation would give a waiting query rows older than its position.
                let snapshot = state.read()
                reader.follow(snapshot.generation)
                var taken = 0
                while taken < Self.requestsPerTurn, let message = try router.receiveMessage(wait: false) {
                    taken += 1
                    try serve(RoutedRequest(message), snapshot)
                }
                // Say how many wait before looking at the position again: the projection
                // thread wakes this one only while some do (`publishProgress`).
                let current = state.queriesParked(parked.count)
                let actions = parked.due(
                    applied: current.applied, readable: reader.isOn(current.generation),
                    now: MonotonicClock.milliseconds())
                for action in actions {
                    // Each reply concerns one client: a socket error on one must not lose
                    // the others, which `due` has already taken off the list.
                    do throws(ZMQError) {
                        try perform(action)
                    } catch let error where !error.isTerminated {
                        diagnostics.error("query loop: socket error", ["error": error.description])
                    }
                }
                _ = state.queriesParked(parked.count)
                metrics.update { $0.parked = parked.count }
            } catch {
                if error.isTerminated { return }
                // A socket error other than shutdown concerns one message; keep serving. The
                // queries parked this turn are counted all the same, or the projection thread
                // would not wake this one for them.
                _ = state.queriesParked(parked.count)
                diagnostics.error("query loop: socket error", ["error": error.description])
            }
        }
    }

    /// A clean stop: hands on the replies still waiting, then lets libzmq deliver what it
    /// holds while the socket closes.
    private mutating func finish() throws(ZMQError) {
        try outbox.drain(on: router, forMilliseconds: StopRequest.drainMilliseconds)
        try router.set(.linger, Int32(StopRequest.drainMilliseconds))
        diagnostics.info(
            "query loop stopped",
            [
                "answered": "\(metrics.read().answered)", "undelivered": "\(outbox.waitingCount)",
                "parked": "\(parked.count)",
            ])
    }

    private mutating func serve(_ routed: RoutedRequest, _ snapshot: Snapshot) throws(ZMQError) {
        guard requestGuard.isListed(routed.metadata) else { return }
        // A client over its reply budget gets nothing answered until it reads.
        guard !outbox.isOverBudget(routed.route) else { return }
        let wire: WireRequest
        do {
            wire = try routed.wireRequest()
        } catch {
            return try send(routed, WireEncoding.failure(id: error.id, error.error))
        }
        let action: BusAction =
            switch wire.requestType {
            case .status?: .status
            case .rebuild?: .rebuild
            case .readLog?, nil: .query
            }
        switch requestGuard.admit(routed.metadata, for: action) {
        case .serve: break
        case .drop: return
        case .unauthorized(let error): return try send(routed, WireEncoding.failure(id: wire.id, error))
        }
        switch wire.requestType {
        case .status?, .rebuild?: try serveStatus(routed, wire)
        case .readLog?, nil: try serveQuery(routed, wire, at: snapshot)
        }
    }

    /// `Status`, or `Rebuild` (which starts one unless `RebuildRequests` says join): both
    /// are answered with the status.
    private mutating func serveStatus(_ routed: RoutedRequest, _ wire: WireRequest) throws(ZMQError) {
        do {
            try wire.onlyFields(WireRequest.bareFields)
        } catch {
            return try send(routed, WireEncoding.failure(id: wire.id, error))
        }
        // The state as it is now, not the turn's snapshot: a Rebuild read earlier in this
        // turn may have started one, and two at once would race to switch.
        if wire.requestType == .rebuild,
            rebuilds.arrive(id: wire.id, underWay: !state.read().rebuild.allowsStart) == .start
        {
            startRebuild()
        }
        // The state as it is now, not the turn's snapshot: a client that sent Rebuild and
        // then Status within one turn must see the rebuild under way, not "idle".
        try send(routed, WireEncoding.success(id: wire.id, ["result": status(state.read()).json]))
    }

    /// A query: answered now, parked until its position (nudging the projection thread),
    /// or refused, as `ParkedQueries` says.
    private mutating func serveQuery(_ routed: RoutedRequest, _ wire: WireRequest, at snapshot: Snapshot)
        throws(ZMQError)
    {
        let request: QueryRequest
        do {
            request = try QueryRequest(wire: wire)
        } catch {
            metrics.update { $0.count(type: wire.type, outcome: error.code.rawValue) }
            return try send(routed, WireEncoding.failure(id: wire.id, error))
        }
        let arrival = parked.arrive(
            request, route: routed, applied: snapshot.applied, readable: reader.isOn(snapshot.generation),
            now: MonotonicClock.milliseconds())
        switch arrival {
        case .answerNow: try perform(.answer(routed, request))
        case .park(let nudge): if nudge { try perform(.nudge) }
        case .refuse(let error):
            metrics.update { $0.count(type: request.query.typeName, outcome: error.code.rawValue) }
            try send(routed, WireEncoding.failure(id: request.id, error))
        }
    }

    private mutating func perform(_ action: ParkedQueries<RoutedRequest>.Action) throws(ZMQError) {
        switch action {
        case .answer(let routed, let request):
            let reply = reader.answer(request)
            metrics.update {
                $0.answered += 1
                $0.count(type: request.query.typeName, outcome: QueryCounters.outcome(of: reply))
            }
            try send(routed, reply)
        case .timeOut(let routed, let request, let error):
            metrics.update { $0.count(type: request.query.typeName, outcome: error.code.rawValue) }
            try send(routed, WireEncoding.failure(id: request.id, error))
        case .nudge:
            state.requestCatchUp()
        }
    }

    private mutating func status(_ snapshot: Snapshot) -> QueryStatus {
        QueryStatus(
            snapshot, uptimeSeconds: uptime.seconds, queriesAnswered: metrics.read().answered,
            queriesWaiting: parked.count,
            readModels: reader.counts(),
            peers: requestGuard.security.map(\.peerStatus))
    }

    private mutating func send(_ routed: RoutedRequest, _ document: JSONValue) throws(ZMQError) {
        try outbox.send(
            routed.reply(JSONWriter.bytes(document)), on: router, reportingDropOf: "query reply", to: diagnostics)
    }
}
