import Glibc

/// Monotonic time in nanoseconds (`CLOCK_MONOTONIC`): the one clock every duration of the
/// bench is measured with, shared by all its threads.
enum BenchClock {
    static func nanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// Seconds elapsed since `start` (a value of `nanoseconds()`).
    static func seconds(since start: UInt64) -> Double {
        Double(nanoseconds() &- start) / 1e9
    }

    /// Sleeps the calling (non-pool) thread.
    static func sleep(milliseconds: Int) {
        usleep(UInt32(max(0, milliseconds)) * 1000)
    }
}

extension BenchClock {
    /// Wall-clock milliseconds since the Unix epoch (for timestamps written into events).
    static func wallMilliseconds() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return now.tv_sec * 1000 + now.tv_nsec / 1_000_000
    }
}
