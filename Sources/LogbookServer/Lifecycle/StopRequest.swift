import Glibc
import LogbookZMQ
import Synchronization

/// How a service asks its serving loops to stop cleanly: a flag they check between turns and
/// a pipe that wakes the ones waiting in a poll. A loop that sees it takes no new request,
/// finishes the work in hand and delivers its replies (`drainMilliseconds` at most), then
/// closes its sockets with a linger of the same bound, so libzmq still sends what it holds.
final class StopRequest: Sendable {
    /// How long a stopping loop may spend delivering the replies it holds.
    static let drainMilliseconds = 3_000
    /// How long a stopping command loop keeps its connections open after its last replies
    /// left, so that its clients read them before the connections close.
    static let replyGraceMilliseconds = 1_000

    private let requested = Atomic(false)
    private let ended = Atomic(0)
    private let pipe: WakeUpPipe

    init() throws(ZMQError) {
        pipe = try WakeUpPipe()
    }

    /// Asks every loop watching this to stop; safe from any thread, more than once.
    func request() {
        requested.store(true, ordering: .releasing)
        pipe.wake()
    }

    var isRequested: Bool { requested.load(ordering: .acquiring) }

    /// A loop watching this has ended (or never started serving); call once per loop.
    func loopEnded() {
        ended.add(1, ordering: .releasing)
    }

    /// Waits until `count` loops have ended, or `milliseconds` have passed.
    func waitForLoops(_ count: Int, upTo milliseconds: Int) {
        let deadline = MonotonicClock.milliseconds() + Int64(milliseconds)
        while ended.load(ordering: .acquiring) < count && MonotonicClock.milliseconds() < deadline {
            usleep(5_000)
        }
    }

    /// The pipe, as an entry of a loop's poll (never drained: it stays readable once asked).
    var readable: PollItem { pipe.readable }
}
