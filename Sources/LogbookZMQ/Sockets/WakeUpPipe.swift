import CZeroMQ
import Glibc

/// A pipe other threads write a byte into to wake a thread blocked in `ZMQPoll.wait`
/// (libzmq sockets cannot be shared, but a descriptor can be polled beside them).
public final class WakeUpPipe: Sendable {
    private let readEnd: Int32
    private let writeEnd: Int32

    public init() throws(ZMQError) {
        var ends: [Int32] = [0, 0]
        guard logbook_wakeup_pipe(&ends) == 0 else { throw ZMQError("pipe2", errno: errno) }
        readEnd = ends[0]
        writeEnd = ends[1]
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// Wakes the polling thread. Never blocks: a full pipe is already a pending wake-up.
    public func wake() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Empties the pipe; call after the poll reported it readable.
    public func drain() {
        var buffer = [UInt8](repeating: 0, count: 256)
        while read(readEnd, &buffer, buffer.count) > 0 {}
    }

    /// The read end, as an entry of `ZMQPoll.wait`.
    public var readable: PollItem { PollItem(fileDescriptor: readEnd) }
}
