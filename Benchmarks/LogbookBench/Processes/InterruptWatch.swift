import Glibc
import LogbookZMQ

/// Ends the bench cleanly on Ctrl-C or SIGTERM: a thread of its own waits for the signal,
/// runs the clean-up (stop every child, remove the scratch directory) and exits 130.
///
/// `blockSignals()` must run on the main thread before any other thread starts, so that
/// every thread inherits the mask and the signal reaches only the waiting thread.
public enum InterruptWatch {
    public static func blockSignals() {
        var set = signals()
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Starts the waiting thread. It lives until the process ends.
    public static func start(cleanUp: @escaping @Sendable () -> Void) {
        _ = OwnedThread(name: "bench-signals") {
            var set = signals()
            var received: Int32 = 0
            while sigwait(&set, &received) != 0 {}
            let message = "\nbench: interrupted; stopping the servers it started\n"
            _ = message.withCString { write(2, $0, strlen($0)) }
            cleanUp()
            exit(130)
        }
    }

    private static func signals() -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        return set
    }
}
