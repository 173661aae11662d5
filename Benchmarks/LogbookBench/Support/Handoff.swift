import Foundation

/// One value passed from one thread to another: the sender calls `put` once, the receiver
/// blocks in `take` until it has.
final class Handoff<Value: Sendable>: @unchecked Sendable {
    // `value` is only read or written with `condition` locked.
    private let condition = NSCondition()
    private var value: Value?

    func put(_ newValue: Value) {
        condition.lock()
        value = newValue
        condition.broadcast()
        condition.unlock()
    }

    func take() -> Value {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let value { return value }
            condition.wait()
        }
    }
}
