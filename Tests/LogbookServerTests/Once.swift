import Synchronization

/// Says yes the first time it is asked, whichever thread asks: for a `stop()` that a test
/// and a `deinit` may both call but that must run once.
final class Once: Sendable {
    private let done = Mutex(false)

    func first() -> Bool {
        done.withLock { done in
            defer { done = true }
            return !done
        }
    }
}
