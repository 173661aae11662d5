/// When a feed process reads the log next, as a value with no socket and no clock: each
/// event (a hint arrived, a read reached a position, a read failed) updates it, and
/// `nextWaitMilliseconds` says how long to wait for a hint before reading anyway.
///
/// - Following: a read every `pollMilliseconds` when no hint comes, so a lost hint costs
///   at most that.
/// - Behind a hint: a hint named a position the read did not reach yet (a streaming
///   replica that has not replayed it): read again after `behindHintMilliseconds`, at most
///   `eagerReads` times per hint, then fall back to the poll (a hint may also be wrong).
/// - Failing: the log cannot be read (PostgreSQL restarting or unreachable): wait twice as
///   long after each failure, from `pollMilliseconds` up to `maximumBackOffMilliseconds`.
///   Only the first failure of a streak and the recovery are worth a diagnostic line.
struct FeedPacing: Equatable {
    let pollMilliseconds: Int
    var behindHintMilliseconds = 20
    var eagerReads = 25
    var maximumBackOffMilliseconds = 5_000
    /// The highest position a hint named.
    private(set) var hinted: Int64 = 0
    private var eagerReadsLeft = 0
    private var behindHint = false
    /// Failed reads in a row.
    private(set) var failures = 0

    init(pollMilliseconds: Int) {
        self.pollMilliseconds = max(1, pollMilliseconds)
    }

    /// A hint said the log reached `position`.
    mutating func hint(_ position: Int64) {
        guard position > hinted else { return }
        hinted = position
        eagerReadsLeft = eagerReads
    }

    /// A read succeeded and everything up to `cursor` is published. Returns true when it
    /// ends a streak of failures.
    mutating func read(reached cursor: Int64) -> Bool {
        behindHint = cursor < hinted && eagerReadsLeft > 0
        if behindHint { eagerReadsLeft -= 1 } else { eagerReadsLeft = 0 }
        defer { failures = 0 }
        return failures > 0
    }

    /// A read failed. Returns true when it starts a streak of failures.
    mutating func readFailed() -> Bool {
        failures += 1
        return failures == 1
    }

    /// How long to wait for a hint before reading the log again.
    var nextWaitMilliseconds: Int {
        if failures > 0 {
            let doublings = min(failures - 1, 16)
            return min(pollMilliseconds << doublings, max(maximumBackOffMilliseconds, pollMilliseconds))
        }
        return behindHint ? min(behindHintMilliseconds, pollMilliseconds) : pollMilliseconds
    }
}
