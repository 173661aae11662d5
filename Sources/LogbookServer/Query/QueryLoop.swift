import LogbookApplication
import LogbookDomain
import LogbookJSON
import LogbookWire
import LogbookZMQ

/// The query process's query thread: answers queries on the queries ROUTER from the
/// current generation's reader. A query with a `minPosition` the read models have not
/// reached waits (parked, while others are answered) until they do, asking the
/// projection thread to catch up, or answers `timeout`. Also answers `Status` and starts
/// a `Rebuild`.
struct QueryLoop: ~Copyable {
    private struct Parked {
        let route: RoutedRequest
        let request: QueryRequest
        let deadline: Int64
    }

    let router: ZMQSocket
    var reader: any ReadModelReader
    var generation: Int
    let generations: any ReadModelGenerations
    let state: QueryProcessState
    let startRebuild: () -> Void
    let clock: any Clock
    let diagnostics: Diagnostics
    private var parked: [Parked] = []
    /// Queries waiting for a position at most; more are refused with `unavailable`.
    static let maximumParked = 10_000
    /// The applied position when the projection thread was last asked to read the log.
    private var nudgedAt: Int64 = -1
    /// The ids of the latest `Rebuild` requests that started a rebuild: a client's retry
    /// (the same id on a fresh socket) joins it rather than starting another one.
    private var rebuildRequestIds: [String] = []
    static let rememberedRebuildIds = 64
    private var answered = 0
    /// Counting rows scans the tables, so `Status` reuses the count while the read models
    /// stay at the position it was taken at (a rebuild polls `Status` ten times a second).
    private var counted: (checkpoint: Int64, counts: ReadModelCounts)?
    private let startedAt: Int64

    init(
        router: consuming ZMQSocket, reader: any ReadModelReader, generation: Int,
        generations: any ReadModelGenerations, state: QueryProcessState, startRebuild: @escaping () -> Void,
        clock: any Clock, diagnostics: Diagnostics
    ) {
        self.router = router
        self.reader = reader
        self.generation = generation
        self.generations = generations
        self.state = state
        self.startRebuild = startRebuild
        self.clock = clock
        self.diagnostics = diagnostics
        startedAt = clock.now().millisecondsSinceEpoch
    }

    mutating func run() {
        while true {
            do {
                let now = MonotonicClock.milliseconds()
                let timeout = parked.map { max(0, Int($0.deadline - now)) }.min() ?? -1
                let ready = try ZMQPoll.wait([router.readable, state.queryWake.readable], timeoutMilliseconds: timeout)
                if ready[1] { state.queryWake.drain() }
                // One snapshot per turn: answering from it with a reader of another
                // generation would give a waiting query rows older than its position.
                let snapshot = state.read()
                if snapshot.generation != generation { switchReader(to: snapshot.generation) }
                while let frames = try router.receive(wait: false) {
                    try serve(RoutedRequest(frames: frames), snapshot)
                }
                try answerParked(snapshot)
            } catch {
                if error.isTerminated { return }
                // A socket error other than shutdown concerns one message; keep serving.
                diagnostics.error("query loop: socket error", ["error": error.description])
            }
        }
    }

    private mutating func serve(_ routed: RoutedRequest, _ snapshot: QueryProcessState.Snapshot) throws(ZMQError) {
        let wire: WireRequest
        do {
            wire = try routed.wireRequest()
        } catch {
            return try send(routed, WireEncoding.failure(id: error.id, error.error))
        }
        switch wire.type {
        case "Status", "Rebuild":
            do {
                try wire.onlyFields(WireRequest.bareFields)
            } catch {
                return try send(routed, WireEncoding.failure(id: wire.id, error))
            }
            if wire.type == "Rebuild" {
                // The state as it is now, not the turn's snapshot: a Rebuild read earlier in
                // this turn has already started one, and two at once would race to switch.
                // One rebuild at a time, once per request id; the reply shows the latest.
                if state.read().rebuild.allowsStart && !rebuildRequestIds.contains(wire.id) {
                    startRebuild()
                    rebuildRequestIds.append(wire.id)
                    if rebuildRequestIds.count > Self.rememberedRebuildIds { rebuildRequestIds.removeFirst() }
                }
            }
            // The state as it is now, not the turn's snapshot: a client that sent Rebuild and
            // then Status within one turn must see the rebuild under way, not "idle".
            try send(routed, WireEncoding.success(id: wire.id, ["result": status(state.read())]))
        default:
            let request: QueryRequest
            do {
                request = try QueryRequest(wire: wire)
            } catch {
                return try send(routed, WireEncoding.failure(id: wire.id, error))
            }
            if request.minPosition <= snapshot.applied && snapshot.generation == generation {
                try send(routed, answer(request))
            } else if parked.count >= Self.maximumParked {
                try send(
                    routed,
                    WireEncoding.failure(
                        id: request.id,
                        ServiceError(
                            .unavailable, "\(parked.count) queries are already waiting for positions; try again later"))
                )
            } else {
                parked.append(
                    Parked(
                        route: routed, request: request,
                        deadline: MonotonicClock.milliseconds() + Int64(request.timeoutMilliseconds)))
                if snapshot.applied > nudgedAt { nudge(at: snapshot.applied) }
            }
        }
    }

    private mutating func answerParked(_ snapshot: QueryProcessState.Snapshot) throws(ZMQError) {
        guard !parked.isEmpty else { return }
        let now = MonotonicClock.milliseconds()
        var waiting: [Parked] = []
        // Until the reader is on the snapshot's generation, nothing it reads is trusted.
        let readable = snapshot.generation == generation
        for entry in parked {
            if readable && entry.request.minPosition <= snapshot.applied {
                try send(entry.route, answer(entry.request))
            } else if entry.deadline <= now {
                try send(
                    entry.route,
                    WireEncoding.failure(id: entry.request.id, entry.request.timedOut(at: snapshot.applied)))
            } else {
                waiting.append(entry)
            }
        }
        parked = waiting
        // The feed moved the read models but not far enough: the position asked for may be
        // an event no topic carries (an email claim), so read the log rather than wait.
        if !waiting.isEmpty && snapshot.applied > nudgedAt { nudge(at: snapshot.applied) }
    }

    /// Asks the projection thread for a log read, once per applied position.
    private mutating func nudge(at applied: Int64) {
        nudgedAt = applied
        state.requestCatchUp()
    }

    private mutating func answer(_ request: QueryRequest) -> JSONValue {
        answered += 1
        do {
            let position = try readerCheckpoint()
            return QueryRequest.reply(
                id: request.id, position: position, result: try QueryHandler.answer(request.query, from: reader))
        } catch {
            return WireEncoding.failure(id: request.id, error)
        }
    }

    private func readerCheckpoint() throws(ServiceError) -> Int64 {
        do {
            return try reader.checkpoint()
        } catch {
            throw ServiceError(.unavailable, "the read models cannot be read: \(error)")
        }
    }

    private mutating func switchReader(to newGeneration: Int) {
        do {
            reader = try generations.openReader(generation: newGeneration)
            counted = nil
            let old = generation
            generation = newGeneration
            generations.removeOlder(than: newGeneration)
            diagnostics.info(
                "queries now answered from rebuilt read models", ["generation": "\(newGeneration)", "old": "\(old)"])
        } catch {
            diagnostics.error(
                "cannot open the rebuilt read models", ["generation": "\(newGeneration)", "error": "\(error)"])
        }
    }

    private mutating func currentCounts() -> ReadModelCounts? {
        guard let checkpoint = try? reader.checkpoint() else { return nil }
        if let counted, counted.checkpoint == checkpoint { return counted.counts }
        guard let counts = try? reader.counts() else { return nil }
        counted = (checkpoint, counts)
        return counts
    }

    private mutating func status(_ snapshot: QueryProcessState.Snapshot) -> JSONValue {
        var result: JSONObject = [
            "role": "query",
            "checkpoint": .int(Int(snapshot.applied)),
            "head": .int(Int(snapshot.head)),
            "lag": .int(Int(max(0, snapshot.head - snapshot.applied))),
            "generation": .int(snapshot.generation),
            "uptimeSeconds": .int(Int((clock.now().millisecondsSinceEpoch - startedAt) / 1000)),
            "eventsApplied": .int(snapshot.eventsApplied),
            "holesDetected": .int(snapshot.holesDetected),
            "queriesAnswered": .int(answered),
            "queriesWaiting": .int(parked.count),
        ]
        if let counts = currentCounts() {
            result["readModels"] = [
                "users": .int(counts.users), "posts": .int(counts.posts), "products": .int(counts.products),
                "orders": .int(counts.orders),
            ]
        }
        result["rebuild"] = Self.rebuildJSON(snapshot.rebuild)
        return .object(result)
    }

    private static func rebuildJSON(_ progress: QueryProcessState.RebuildProgress) -> JSONValue {
        switch progress {
        case .idle: ["state": "idle"]
        case .running(let generation, let position, let head, _):
            [
                "state": "running", "generation": .int(generation), "position": .int(Int(position)),
                "head": .int(Int(head)),
            ]
        case .finished(let generation, _, _): ["state": "switching", "generation": .int(generation)]
        case .failed(let reason): ["state": "failed", "reason": .string(reason)]
        }
    }

    private func send(_ routed: RoutedRequest, _ document: JSONValue) throws(ZMQError) {
        if !(try router.send(routed.reply(JSONWriter.bytes(document)), wait: false)) {
            diagnostics.debug("query reply dropped: the client is gone or not reading")
        }
    }
}
