import CZeroMQ

/// One libzmq context: the I/O threads every socket of a process shares. A context may be
/// used from any thread (libzmq promises that for contexts, never for sockets).
///
/// `shutdown()` makes every blocking call on its sockets return a terminated error, so the
/// threads owning them close them and end; the context itself is destroyed when the last
/// socket (each holds a reference) and the last other owner let go of it.
public final class ZMQContext: @unchecked Sendable {
    let handle: UnsafeMutableRawPointer

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

    deinit {
        while zmq_ctx_term(handle) != 0 && zmq_errno() == EINTR {}
    }

    /// Whether this libzmq was built with a capability (`"curve"`, `"ipc"` …).
    public static func has(_ capability: String) -> Bool {
        zmq_has(capability) == 1
    }
}
