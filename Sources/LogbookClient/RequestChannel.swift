import LogbookZMQ

/// One server's DEALER on the client's thread and the requests waiting on it: those sent in
/// their current attempt, and those not handed to libzmq yet because the socket had no
/// completed connection (the commands socket sends only to connected workers, so with every
/// worker down, or on a fresh socket still connecting, a request waits here, not in libzmq).
final class RequestChannel {
    /// A request waiting for its reply.
    struct Pending {
        var ticket: UInt64
        var id: String
        var frame: [UInt8]
        var attempt: Int
        var deadline: ContinuousClock.Instant
        /// Order of first sending, kept when resending.
        var sequence: UInt64
    }

    let server: ServerEndpoint
    private(set) var socket: ZMQSocket
    private(set) var pending: [String: Pending] = [:]
    /// Ids waiting to be handed to libzmq in this attempt, in order of first sending.
    private var unsent: [String] = []

    init(server: ServerEndpoint, socket: consuming ZMQSocket) {
        self.server = server
        self.socket = socket
    }

    /// Takes a new request; `flush` sends it.
    func add(_ request: Pending) {
        pending[request.id] = request
        unsent.append(request.id)
    }

    /// Forgets a request (answered, failed or given up); nil when it was not waiting.
    func remove(_ id: String) -> Pending? {
        guard let request = pending.removeValue(forKey: id) else { return nil }
        unsent.removeAll { $0 == id }
        return request
    }

    /// Starts the next attempt of a request whose attempt timed out.
    func renew(_ id: String, deadline: ContinuousClock.Instant) {
        pending[id]?.attempt += 1
        pending[id]?.deadline = deadline
    }

    /// Puts a fresh socket in place of the old one (closed here) and makes every waiting
    /// request unsent again, in order of first sending.
    func replaceSocket(with fresh: consuming ZMQSocket) {
        socket = fresh
        unsent = pending.values.sorted { $0.sequence < $1.sequence }.map(\.id)
    }

    /// Hands unsent requests to libzmq in order, without blocking, until it has no room
    /// (no completed connection: the rest wait for the socket to become writable, or for
    /// their deadline). Returns the requests libzmq refused outright, removed from here.
    func flush() -> [(Pending, ZMQError)] {
        var refused: [(Pending, ZMQError)] = []
        while let id = unsent.first {
            guard let request = pending[id] else {
                unsent.removeFirst()
                continue
            }
            do {
                guard try socket.send([[], request.frame], wait: false) else { break }
                unsent.removeFirst()
            } catch {
                _ = remove(id)
                refused.append((request, error))
            }
        }
        return refused
    }

    /// The socket as a poll entry: readable for replies, and writable while requests wait
    /// to be sent.
    var pollItem: PollItem { socket.watched(for: unsent.isEmpty ? .readable : [.readable, .writable]) }
}
