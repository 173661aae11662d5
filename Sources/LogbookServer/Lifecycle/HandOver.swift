import Synchronization

/// A value passed to another thread exactly once: the receiver takes it, and nothing else
/// keeps a reference to it afterwards.
final class HandOver<Value: Sendable>: Sendable {
    private let value: Mutex<Value?>

    init(_ value: Value) {
        self.value = Mutex(value)
    }

    /// The value, the first time; nil after.
    func take() -> Value? {
        value.withLock { held in
            defer { held = nil }
            return held
        }
    }
}
