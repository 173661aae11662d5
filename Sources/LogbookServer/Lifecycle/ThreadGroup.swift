import LogbookZMQ
import Synchronization

/// The threads a service started, so stopping it can wait for every one of them.
final class ThreadGroup: Sendable {
    private let threads = Mutex<[OwnedThread]>([])

    func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = OwnedThread(name: name, body)
        threads.withLock { $0.append(thread) }
    }

    /// Starts each body on a thread of its own with a gate of its own, and waits until every
    /// one has opened its gate (its sockets are bound); throws the first failure, after which
    /// the caller stops what did start.
    func startGated(_ bodies: [(name: String, body: @Sendable (StartupGate) -> Void)]) throws(ServiceStartError) {
        let gates = bodies.map { _ in StartupGate() }
        for ((name, body), gate) in zip(bodies, gates) { start(name: name) { body(gate) } }
        for gate in gates { try gate.wait() }
    }

    func joinAll() {
        for thread in threads.withLock({ $0 }) { thread.join() }
    }
}
