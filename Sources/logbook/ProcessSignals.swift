import Glibc

/// SIGINT and SIGTERM, taken out of asynchronous delivery so the main thread can wait for
/// them: block them before any other thread starts (threads inherit the mask), then `wait()`.
enum ProcessSignals {
    private static func stopSignals() -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        return set
    }

    /// Blocks SIGINT and SIGTERM for this thread and every thread it starts from now on.
    static func block() {
        var set = stopSignals()
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Waits until SIGINT or SIGTERM arrives; returns its name.
    static func wait() -> String {
        var set = stopSignals()
        var received: Int32 = 0
        while sigwait(&set, &received) != 0 {}
        return received == SIGINT ? "SIGINT" : "SIGTERM"
    }
}
