import CZeroMQ
import Synchronization

/// One libzmq context: the I/O threads every socket of a process shares. A context may be
/// used from any thread (libzmq promises that for contexts, never for sockets).
///
/// `shutdown()` makes every blocking call on its sockets return a terminated error, so the
/// threads owning them close them and end; the context itself is destroyed when the last
/// socket (each holds a reference) and the last other owner let go of it.
public final class ZMQContext: @unchecked Sendable {
    let handle: UnsafeMutableRawPointer
    private let terminated = Atomic<Bool>(false)

    public init(ioThreads: Int32 = 1) throws(ZMQError) {
        guard let handle = zmq_ctx_new() else { throw ZMQError.last("zmq_ctx_new") }
        zmq_ctx_set(handle, ZMQ_IO_THREADS, ioThreads)
        self.handle = handle
    }

    /// Wakes every blocking call on this context's sockets with a terminated error.
    /// Safe to call from any thread, more than once.
    public func shutdown() {
        zmq_ctx_shutdown(handle)
    }

    /// Ends the context: waits until every socket of it is closed and every message sent on
    /// them was handed to the network or its socket's linger ran out. A process calls it on
    /// its way out, once its threads closed their sockets, so that replies sent just before
    /// still leave (at exit, libzmq's I/O threads die with whatever they hold). Blocks while
    /// any socket of the context is open; only the context's owner may call it, once its
    /// sockets are closed. Later calls, and the deinitializer, do nothing more.
    public func terminate() {
        guard !terminated.exchange(true, ordering: .acquiringAndReleasing) else { return }
        while zmq_ctx_term(handle) != 0 && zmq_errno() == EINTR {}
    }

    deinit {
        terminate()
    }

    /// Whether this libzmq was built with a capability (`"curve"`, `"ipc"` …).
    public static func has(_ capability: String) -> Bool {
        zmq_has(capability) == 1
    }
}
