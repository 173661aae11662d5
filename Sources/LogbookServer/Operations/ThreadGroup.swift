import LogbookZMQ
import Synchronization

/// The threads a service started, so stopping it can wait for every one of them.
final class ThreadGroup: Sendable {
    private let threads = Mutex<[OwnedThread]>([])

    func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = OwnedThread(name: name, body)
        threads.withLock { $0.append(thread) }
    }

    func joinAll() {
        for thread in threads.withLock({ $0 }) { thread.join() }
    }
}
