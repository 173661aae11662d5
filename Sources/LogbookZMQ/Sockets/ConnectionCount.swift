import CZeroMQ
import Synchronization

/// How many peers are connected to a bound socket, kept by libzmq's socket monitor: a
/// thread of its own reads the monitor's events (a peer accepted, a peer gone) and keeps
/// `connected` up to date, so the socket's owner never waits on it and any thread may read
/// the count. Each monitored socket adds only its own peers: when it closes (a feed bound
/// anew) its monitor takes back what it added and ends, and the new socket's monitor
/// counts from zero.
public final class ConnectionCount: Sendable {
    private let value = Atomic<Int>(0)
    private let monitors = Atomic<Int>(0)

    public init() {}

    /// Peers connected now (handshakes under way included).
    public var connected: Int { max(0, value.load(ordering: .relaxed)) }

    /// Starts counting the peers of `socket` (call on its owner thread): libzmq publishes its
    /// events on an inproc endpoint of `context`, which a new thread reads until the socket
    /// closes or the context shuts down.
    public func monitor(_ socket: borrowing ZMQSocket, in context: ZMQContext) throws(ZMQError) {
        let number = monitors.add(1, ordering: .relaxed).newValue
        let endpoint = "inproc://logbook-monitor-\(ObjectIdentifier(self).hashValue)-\(number)"
        guard zmq_socket_monitor(socket.handle, endpoint, ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED) == 0 else {
            throw ZMQError.last("zmq_socket_monitor")
        }
        // The reader socket is made, used and closed on the monitor's own thread.
        _ = OwnedThread(name: "logbook-monitor") { [self] in
            guard let reader = try? ZMQSocket(context, .pair), (try? reader.connect(endpoint)) != nil else { return }
            count(reader)
        }
    }

    /// Reads events until the monitored socket closes or the context shuts down.
    private func count(_ reader: borrowing ZMQSocket) {
        var own = 0
        defer { value.subtract(own, ordering: .relaxed) }
        while let frames = try? reader.receive(), let first = frames.first, first.count >= 2 {
            let event = Int32(UInt16(first[0]) | UInt16(first[1]) << 8)
            switch event {
            case ZMQ_EVENT_ACCEPTED:
                own += 1
                value.add(1, ordering: .relaxed)
            case ZMQ_EVENT_DISCONNECTED:
                own -= 1
                value.subtract(1, ordering: .relaxed)
            case ZMQ_EVENT_MONITOR_STOPPED: return
            default: continue
            }
        }
    }
}
