import Synchronization

/// A value several threads read and change, behind a lock; a class, so closures can share it.
final class Shared<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) {
        mutex = Mutex(value)
    }

    var value: Value { mutex.withLock { $0 } }

    func update<T>(_ body: (inout Value) -> T) -> T {
        mutex.withLock { body(&$0) }
    }
}
