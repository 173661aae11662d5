import CZeroMQ
import Foundation
import LogbookLocks

/// A dedicated thread for blocking work (libzmq, SQLite) that must never run on Swift's
/// cooperative pool. Everything the body uses that is not `Sendable` (sockets above all)
/// is created inside the body, on this thread. `join()` waits until the body returned.
public final class OwnedThread: Sendable {
    /// Whether the body has returned.
    private let finished = ConditionLock(false)

    /// Starts `body` at once on a new thread called `name` (visible in debuggers and `top -H`).
    public init(name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread { [finished] in
            // Foundation keeps `name` to itself on Linux: the kernel's name (at most 15
            // bytes) is what `top -H`, `perf` and /proc show.
            logbook_name_this_thread(name)
            body()
            finished.withLock { $0 = true }
            finished.broadcast()
        }
        thread.name = name
        thread.stackSize = 4 << 20
        thread.start()
    }

    /// Blocks the calling thread until the body has returned.
    public func join() {
        finished.wait(until: { $0 })
    }

    /// Whether the body has returned.
    public var isFinished: Bool { finished.withLock { $0 } }
}
