import CZeroMQ
import Glibc

/// One thing `ZMQPoll.wait` watches for input: a socket of the calling thread, or a file
/// descriptor (a wake-up pipe).
public struct PollItem {
    fileprivate var raw: zmq_pollitem_t

    init(socket: UnsafeMutableRawPointer) {
        raw = zmq_pollitem_t(socket: socket, fd: -1, events: Int16(ZMQ_POLLIN), revents: 0)
    }

    /// A file descriptor that becomes readable.
    public init(fileDescriptor: Int32) {
        raw = zmq_pollitem_t(socket: nil, fd: fileDescriptor, events: Int16(ZMQ_POLLIN), revents: 0)
    }
}

/// `zmq_poll` over the calling thread's own sockets and descriptors.
public enum ZMQPoll {
    /// Waits until one of `items` is readable or `timeoutMilliseconds` pass (-1: forever).
    /// Returns, per item, whether it is readable. An interrupted wait returns all false.
    public static func wait(_ items: [PollItem], timeoutMilliseconds: Int) throws(ZMQError) -> [Bool] {
        var raw = items.map(\.raw)
        let count = zmq_poll(&raw, Int32(raw.count), timeoutMilliseconds)
        if count < 0 {
            let error = zmq_errno()
            if error == EINTR { return Array(repeating: false, count: raw.count) }
            throw ZMQError("zmq_poll", errno: error)
        }
        return raw.map { ($0.revents & Int16(ZMQ_POLLIN)) != 0 }
    }
}
