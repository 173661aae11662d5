import CZeroMQ
import Dispatch
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
    /// The monitors' reader threads, for `join()`.
    private let readers = Mutex<[OwnedThread]>([])

    public init() {}

    /// Peers connected now (handshakes under way included).
    public var connected: Int { max(0, value.load(ordering: .relaxed)) }

    /// Starts counting the peers of `socket` (call on its owner thread): libzmq publishes its
    /// events on an inproc endpoint of `context`, which a new thread reads until the socket
    /// closes or the context shuts down. Returns once that thread's socket is connected:
    /// libzmq's I/O thread blocks on an event while the monitor has no reader, so there must
    /// be one before any peer comes, and it must never stop reading while the socket lives.
    public func monitor(_ socket: borrowing ZMQSocket, in context: ZMQContext) throws(ZMQError) {
        let number = monitors.add(1, ordering: .relaxed).newValue
        let endpoint = "inproc://logbook-monitor-\(ObjectIdentifier(self).hashValue)-\(number)"
        guard zmq_socket_monitor(socket.handle, endpoint, ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED) == 0 else {
            throw ZMQError.last("zmq_socket_monitor")
        }
        let connected = DispatchSemaphore(value: 0)
        let failure = Mutex<ZMQError?>(nil)
        // The reader socket is made, used and closed on the monitor's own thread.
        let reader = OwnedThread(name: "logbook-monitor") { [self] in
            do throws(ZMQError) {
                let reader = try ZMQSocket(context, .pair)
                try reader.connect(endpoint)
                connected.signal()
                count(reader)
            } catch {
                failure.withLock { $0 = error }
                connected.signal()
            }
        }
        readers.withLock { $0.append(reader) }
        connected.wait()
        if let error = failure.withLock({ $0 }) {
            zmq_socket_monitor(socket.handle, nil, 0)
            throw error
        }
    }

    /// Waits until every monitor's reader thread has ended (each ends when its socket closes
    /// or the context shuts down), so that its socket no longer holds the context: a process
    /// that stops lets its context end, and libzmq delivers what the closed sockets hold
    /// (their linger), only once every socket of it is closed.
    public func join() {
        for reader in readers.withLock({ $0 }) { reader.join() }
    }

    /// Reads events until the monitored socket closes or the context shuts down.
    private func count(_ reader: borrowing ZMQSocket) {
        var own = 0
        defer { value.subtract(own, ordering: .relaxed) }
        while true {
            let frames: [[UInt8]]?
            do {
                frames = try reader.receive()
            } catch {
                if error.isTerminated { return }
                continue
            }
            guard let first = frames?.first, first.count >= 2 else { continue }
            switch Int32(UInt16(first[0]) | UInt16(first[1]) << 8) {
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
