import Glibc

/// SIGINT and SIGTERM (and whatever else a command asks for), taken out of asynchronous
/// delivery so the main thread can wait for them: block them before any other thread
/// starts (threads inherit the mask), then `wait()`.
enum ProcessSignals {
    private static func signals(_ extra: [Int32]) -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in [SIGINT, SIGTERM] + extra { sigaddset(&set, signal) }
        return set
    }

    /// Blocks SIGINT, SIGTERM and `extra` for this thread and every thread it starts from now on.
    static func block(including extra: [Int32] = []) {
        var set = signals(extra)
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Waits until one of the blocked signals arrives; returns it.
    static func wait(including extra: [Int32] = []) -> Int32 {
        var set = signals(extra)
        var received: Int32 = 0
        while sigwait(&set, &received) != 0 {}
        return received
    }

    /// One of the blocked signals if it has arrived, taken; nil at once when none has.
    static func take(including extra: [Int32] = []) -> Int32? {
        var set = signals(extra)
        var none = timespec(tv_sec: 0, tv_nsec: 0)
        let received = sigtimedwait(&set, nil, &none)
        return received > 0 ? received : nil
    }

    static func name(_ signal: Int32) -> String {
        switch signal {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        case SIGHUP: "SIGHUP"
        default: "signal \(signal)"
        }
    }
}
