import Foundation
import LogbookLocks
import Testing

/// `ConditionLock`: what its closures see and change, and how its waits end, proven by what
/// the waiting threads report. A deadline bounds only how long a broken lock would hang a
/// test; no result depends on when a thread runs.
@Suite("ConditionLock: a value behind a lock, with waits for its changes")
struct ConditionLockTests {
    /// A deadline far enough that only a lost wake-up reaches it.
    private static var generous: ContinuousClock.Instant { .now + .seconds(60) }

    /// Runs `body` on a thread of its own and returns a lock whose state becomes its result.
    private static func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) -> ConditionLock<T?> {
        let result = ConditionLock<T?>(nil)
        Thread {
            let value = body()
            result.withLock { $0 = value }
            result.broadcast()
        }.start()
        return result
    }

    @Test("withLock hands its closure the state to read and change, and returns the closure's result")
    func readsAndChanges() {
        let lock = ConditionLock([1, 2])
        let count = lock.withLock { numbers in
            numbers.append(3)
            return numbers.count
        }
        #expect(count == 3)
        #expect(lock.withLock { $0 } == [1, 2, 3])
    }

    @Test("a closure's typed error comes out of withLock, the change made before it stays, and the lock is free")
    func throwingClosure() {
        struct Refused: Error, Equatable {}
        let lock = ConditionLock(0)
        #expect(throws: Refused()) {
            try lock.withLock { (value: inout Int) throws(Refused) -> Void in
                value = 7
                throw Refused()
            }
        }
        #expect(lock.withLock { $0 } == 7)
    }

    @Test("a predicate that holds at once is not waited for, and its closure runs in the same hold")
    func readyAtOnce() {
        let lock = ConditionLock(5)
        let incremented = lock.withLock(
            when: { $0 == 5 },
            do: { value -> Int in
                value += 1
                return value
            })
        #expect(incremented == 6)
        #expect(lock.withLock(when: { $0 == 6 }, before: .now - .seconds(1), do: { $0 }) == 6)
    }

    @Test("a waiter sleeps until another thread's change makes its predicate hold, then sees that change")
    func waitsForAChange() {
        let lock = ConditionLock(0)
        let seen = Self.onThread { lock.withLock(when: { $0 >= 3 }, do: { value -> Int in value }) }
        for _ in 1...3 {
            lock.withLock { $0 += 1 }
            lock.broadcast()
        }
        #expect(seen.withLock(when: { $0 != nil }, before: Self.generous, do: { $0 }) == .some(3))
    }

    @Test("wait(until:) returns once another thread's change made its predicate hold")
    func waitUntil() {
        let lock = ConditionLock(false)
        Thread {
            lock.withLock { $0 = true }
            lock.broadcast()
        }.start()
        lock.wait(until: { $0 })
        #expect(lock.withLock { $0 })
    }

    @Test("signal wakes a single waiter whose predicate the change made true")
    func signalWakesOne() {
        let lock = ConditionLock(false)
        let woke = Self.onThread { lock.withLock(when: { $0 }, before: Self.generous, do: { _ in true }) ?? false }
        lock.withLock { $0 = true }
        lock.signal()
        #expect(woke.withLock(when: { $0 != nil }, before: Self.generous, do: { $0 }) == .some(true))
    }

    @Test("a wait whose predicate never holds returns nil once its deadline passed, without running its closure")
    func deadlinePasses() {
        let lock = ConditionLock(0)
        var ran = false
        let result: Int? = lock.withLock(
            when: { $0 > 0 }, before: .now + .milliseconds(20),
            do: { value in
                ran = true
                return value
            })
        #expect(result == nil)
        #expect(!ran)
        #expect(lock.withLock(when: { $0 > 0 }, before: .now - .seconds(1), do: { _ in 1 }) == nil)
    }

    @Test("broadcast wakes every waiter, each with its own predicate")
    func broadcastWakesAll() {
        let lock = ConditionLock(0)
        let waiters = (1...3).map { threshold in
            Self.onThread { lock.withLock(when: { $0 >= threshold }, before: Self.generous, do: { $0 }) ?? -1 }
        }
        lock.withLock { $0 = 3 }
        lock.broadcast()
        let seen = waiters.map { waiter in waiter.withLock(when: { $0 != nil }, before: Self.generous, do: { $0 }) }
        #expect(seen == [3, 3, 3])
    }
}
