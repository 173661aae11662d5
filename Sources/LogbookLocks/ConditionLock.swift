import Glibc

/// A value guarded by one lock, with one condition variable for the threads that wait for
/// it to change: the only way the process's threads wait for one another's state.
///
/// It promises: `state` is read and written only with the lock held, inside a closure
/// passed to one of the `withLock` methods, so no change is ever seen half made; a waiter
/// tests its predicate only with the lock held, and a change made under the lock followed by
/// `broadcast()` (or `signal()`, when any single waiter will do) is never missed by a thread
/// waiting for it; deadlines are on the monotonic clock, so a change of the wall clock
/// neither shortens nor stretches a wait. The lock is not recursive: a closure must not call
/// back into the same `ConditionLock`, except for `signal()` and `broadcast()`.
///
/// `Synchronization.Mutex` guards a value as well but cannot wait; this is for the places
/// where a thread sleeps until another thread's change (a hand-over, a join, a stop).
public final class ConditionLock<State> {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    /// Read and written only with `mutex` locked.
    private var state: State

    /// A lock guarding `state`.
    public init(_ state: State) {
        self.state = state
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        precondition(pthread_mutex_init(mutex, nil) == 0, "pthread_mutex_init failed")
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        precondition(pthread_cond_init(condition, &attributes) == 0, "pthread_cond_init failed")
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deinitialize(count: 1)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with the state, the lock held, and returns what it returns.
    public func withLock<Result, Failure: Error>(
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }

    /// Waits, as long as it takes, until `ready` holds of the state, then runs `body` within
    /// the same hold of the lock (so what `ready` saw is still true for `body`).
    public func withLock<Result, Failure: Error>(
        when ready: (State) -> Bool, do body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !ready(state) { pthread_cond_wait(condition, mutex) }
        return try body(&state)
    }

    /// Waits, as long as it takes, until `ready` holds of the state.
    public func wait(until ready: (State) -> Bool) {
        withLock(when: ready, do: { _ in })
    }

    /// Waits until `ready` holds of the state or `deadline` passes, whichever comes first;
    /// runs `body` within the same hold of the lock when `ready` holds, and returns nil
    /// without running it when the deadline passed first. A predicate that holds at once
    /// wins over a deadline already past.
    public func withLock<Result, Failure: Error>(
        when ready: (State) -> Bool, before deadline: ContinuousClock.Instant,
        do body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        if !ready(state) {
            var until = Self.monotonicTime(after: ContinuousClock.now.duration(to: deadline))
            while !ready(state) {
                if pthread_cond_timedwait(condition, mutex, &until) == ETIMEDOUT, !ready(state) { return nil }
            }
        }
        return try body(&state)
    }

    /// Wakes one thread waiting in a `withLock(when:…)`, if any; with or without the lock held.
    /// Only for a change that any one of the waiters can act on.
    public func signal() {
        pthread_cond_signal(condition)
    }

    /// Wakes every thread waiting in a `withLock(when:…)`; with or without the lock held.
    public func broadcast() {
        pthread_cond_broadcast(condition)
    }

    /// The monotonic clock's reading `duration` from now (now itself for a negative one).
    private static func monotonicTime(after duration: Duration) -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let (seconds, attoseconds) = max(duration, .zero).components
        // A far deadline is clamped (to decades away) rather than overflowing.
        let nanoseconds = Int64(now.tv_nsec) + attoseconds / 1_000_000_000
        let wholeSeconds = Int64(now.tv_sec) + min(seconds, Int64(Int32.max)) + nanoseconds / 1_000_000_000
        return timespec(tv_sec: Int(wholeSeconds), tv_nsec: Int(nanoseconds % 1_000_000_000))
    }
}

// The state is only ever reached with the lock held, one thread at a time.
extension ConditionLock: @unchecked Sendable where State: Sendable {}
