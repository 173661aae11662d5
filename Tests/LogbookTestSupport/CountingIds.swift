public import LogbookApplication
import Synchronization

/// Event ids `<prefix>1`, `<prefix>2`, … (`e1`, `e2`, … by default) in the order they are
/// asked for, whichever threads ask.
public final class CountingIds: IDGenerator, Sendable {
    private let prefix: String
    private let next = Mutex(0)

    public init(prefix: String = "e") {
        self.prefix = prefix
    }

    public func newEventId() -> String {
        let number = next.withLock { next in
            next += 1
            return next
        }
        return "\(prefix)\(number)"
    }
}
