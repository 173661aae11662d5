import LogbookApplication
import LogbookZMQ
import Synchronization

/// What the threads of a query process share, behind one lock, and the pipes that wake
/// them: the projection thread publishes how far the read models are; the query thread
/// asks it to catch up; the rebuild thread reports progress and hands over a finished
/// generation.
final class QueryProcessState: Sendable {
    struct Snapshot: Sendable {
        /// Every event at or before this position is in the current generation's rows.
        var applied: Int64 = 0
        /// The log's head as last learned (feed or log read).
        var head: Int64 = 0
        var generation = 0
        var eventsApplied = 0
        var holesDetected = 0
        var catchUpRequested = false
        var rebuild = RebuildProgress.idle
        /// When (monotonic milliseconds) the read models last reached the head they knew.
        var caughtUpAt = MonotonicClock.milliseconds()
        /// How many queries the query thread holds parked, as it last said.
        var queriesParked = 0

        /// Seconds since the read models last reached the head they knew; 0 when they are there.
        func lagSeconds(now: Int64) -> Double {
            applied >= head ? 0 : Double(max(0, now - caughtUpAt)) / 1000
        }
    }

    /// Where a rebuild stands.
    enum RebuildProgress: Sendable {
        case idle
        /// Filling `generation`; it has applied through `position` of a log whose head is `head`.
        case running(generation: Int, position: Int64, head: Int64, startedAt: Int64)
        /// Filled and complete: the projection thread should take `store` over and switch to it.
        case finished(generation: Int, store: any ReadModelStore, startedAt: Int64)
        case failed(reason: String)

        /// True when no rebuild is under way, so a new one may start.
        var allowsStart: Bool {
            switch self {
            case .idle, .failed: true
            case .running, .finished: false
            }
        }
    }

    private let snapshot = Mutex(Snapshot())
    /// Wakes the query thread (new position, new generation).
    let queryWake: WakeUpPipe
    /// Wakes the projection thread (catch-up wanted, generation ready).
    let projectionWake: WakeUpPipe

    init() throws(ZMQError) {
        queryWake = try WakeUpPipe()
        projectionWake = try WakeUpPipe()
    }

    func read() -> Snapshot {
        snapshot.withLock { $0 }
    }

    func update<T>(_ body: (inout Snapshot) -> T) -> T {
        snapshot.withLock { body(&$0) }
    }

    /// Publishes the projection's progress (`body` changes the snapshot) and wakes the query
    /// thread when it has something to do with it: queries parked, another generation, or
    /// `always`. With none parked the wake-up (a pipe write and a turn of the query thread,
    /// after every applied batch) is skipped. No query is left waiting by it: the query
    /// thread says how many it parked (`queriesParked(_:)`) before it looks at `applied`
    /// again, under the same lock, so either it sees the new position or this sees its count.
    func publishProgress(always: Bool = false, _ body: (inout Snapshot) -> Void) {
        let wake = update { snapshot in
            let generation = snapshot.generation
            body(&snapshot)
            return always || snapshot.queriesParked > 0 || snapshot.generation != generation
        }
        if wake { queryWake.wake() }
    }

    /// The query thread's count of parked queries; returns the snapshot as it is now.
    func queriesParked(_ count: Int) -> Snapshot {
        update { snapshot in
            snapshot.queriesParked = count
            return snapshot
        }
    }

    /// Asks the projection thread to read the log up to its head now.
    func requestCatchUp() {
        let wasRequested = update { state in
            defer { state.catchUpRequested = true }
            return state.catchUpRequested
        }
        if !wasRequested { projectionWake.wake() }
    }
}
