public import LogbookApplication
import Synchronization

/// Event ids `e1`, `e2`, … in the order they are asked for, whichever threads ask.
public final class CountingIds: IDGenerator, Sendable {
    private let next = Mutex(0)

    public init() {}

    public func newEventId() -> String {
        let number = next.withLock { next in
            next += 1
            return next
        }
        return "e\(number)"
    }
}
