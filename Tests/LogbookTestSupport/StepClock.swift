public import LogbookApplication
public import LogbookDomain
import Synchronization

/// A clock that moves one millisecond per reading, from a fixed instant: timestamps are
/// reproducible and strictly increasing, whichever threads read it.
public final class StepClock: Clock, Sendable {
    private let milliseconds = Mutex<Int64>(1_764_000_000_000)

    public init() {}

    public func now() -> Timestamp {
        let reading = milliseconds.withLock { milliseconds in
            milliseconds += 1
            return milliseconds
        }
        return Timestamp(millisecondsSinceEpoch: reading)
    }
}
