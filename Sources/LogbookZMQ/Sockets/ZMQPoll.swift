import CZeroMQ
import Glibc

/// What a polled item is watched for, or found ready for.
public struct PollEvents: OptionSet, Sendable {
    public let rawValue: Int16

    public init(rawValue: Int16) {
        self.rawValue = rawValue
    }

    /// A message (or bytes) can be read.
    public static let readable = PollEvents(rawValue: Int16(ZMQ_POLLIN))
    /// A message can be sent without waiting (for a socket with `immediate`: some
    /// connection has completed).
    public static let writable = PollEvents(rawValue: Int16(ZMQ_POLLOUT))
}

/// One thing `ZMQPoll` watches: a socket of the calling thread, or a file descriptor (a
/// wake-up pipe).
public struct PollItem {
    fileprivate var raw: zmq_pollitem_t

    init(socket: UnsafeMutableRawPointer, events: PollEvents = .readable) {
        raw = zmq_pollitem_t(socket: socket, fd: -1, events: events.rawValue, revents: 0)
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
        try ready(items, timeoutMilliseconds: timeoutMilliseconds).map { $0.contains(.readable) }
    }

    /// Waits until one of `items` is ready for what it watches or `timeoutMilliseconds`
    /// pass (-1: forever). Returns, per item, what it is ready for (among what it
    /// watches). An interrupted wait returns nothing ready.
    public static func ready(_ items: [PollItem], timeoutMilliseconds: Int) throws(ZMQError) -> [PollEvents] {
        var raw = items.map(\.raw)
        let count = zmq_poll(&raw, Int32(raw.count), timeoutMilliseconds)
        if count < 0 {
            let error = zmq_errno()
            if error == EINTR { return Array(repeating: [], count: raw.count) }
            throw ZMQError("zmq_poll", errno: error)
        }
        return raw.map { PollEvents(rawValue: $0.revents).intersection([.readable, .writable]) }
    }
}
