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

    /// Asks the projection thread to read the log up to its head now.
    func requestCatchUp() {
        let wasRequested = update { state in
            defer { state.catchUpRequested = true }
            return state.catchUpRequested
        }
        if !wasRequested { projectionWake.wake() }
    }
}
