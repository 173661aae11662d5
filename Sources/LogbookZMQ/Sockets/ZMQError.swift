import CZeroMQ
import Glibc

/// A failed libzmq call: which operation, the errno it left, and libzmq's own words for it.
public struct ZMQError: Error, Sendable, Equatable, CustomStringConvertible {
    public var operation: String
    public var errno: Int32

    public init(_ operation: String, errno: Int32) {
        self.operation = operation
        self.errno = errno
    }

    /// The error the last libzmq call on this thread left.
    static func last(_ operation: String) -> ZMQError {
        ZMQError(operation, errno: zmq_errno())
    }

    /// The context was shut down: the socket's owner should close it and stop.
    public var isTerminated: Bool { errno == ETERM }

    public var description: String {
        "\(operation): \(String(cString: zmq_strerror(errno)))"
    }
}
