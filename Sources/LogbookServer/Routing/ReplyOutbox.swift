import Glibc
import LogbookZMQ

/// The replies of one ROUTER socket that libzmq could not take at once, kept per client and
/// bounded by bytes, so that a client that never reads pins a bounded amount of the server's
/// memory and every other client is served as before.
///
/// A ROUTER's queue to each client holds at most its send high-water mark of messages
/// (`ServerSockets.router`, a few per socket); a reply that finds that queue full waits
/// here, in order, and `flush` hands it on when the client has read. A reply that would take
/// a client's waiting replies past `budgetBytes` is dropped, and so is every later one (a
/// loop may stop serving its requests: `isOverBudget`) until the client has read all that
/// was kept; one reply is always kept, however large, when none waits. A client that is
/// gone (libzmq no longer routes to it) loses what waits for it.
///
/// So what one client can pin on a socket is: the high-water mark × that socket's largest
/// reply (in libzmq's queue), one more being written by libzmq's I/O thread, and
/// `budgetBytes` (or one reply) here.
struct ReplyOutbox {
    /// The bytes of waiting replies one client may have here.
    static let defaultBudgetBytes = 8 << 20
    /// How often a loop with replies waiting tries to hand them on.
    static let retryMilliseconds = 10

    /// What became of a reply.
    enum Delivery: Equatable {
        /// Handed to libzmq.
        case sent
        /// Its client's queue was full: it waits here.
        case kept
        /// It would take its client's waiting replies past `budgetBytes`, or one was dropped
        /// before and the client has not read since: dropped.
        case overBudget
        /// Its client is gone: dropped.
        case gone
    }

    private struct Backlog {
        var messages: [[[UInt8]]] = []
        var next = 0
        var bytes = 0
        /// A reply was dropped because this backlog had the whole budget: the client gets
        /// nothing more until it has read everything kept here.
        var refused = false
    }

    let budgetBytes: Int
    /// Waiting replies by client (the identity frame a ROUTER puts first).
    private var waiting: [[UInt8]: Backlog] = [:]

    init(budgetBytes: Int = Self.defaultBudgetBytes) {
        self.budgetBytes = budgetBytes
    }

    /// True when no reply waits.
    var isEmpty: Bool { waiting.isEmpty }

    /// How long a loop may wait for requests before calling `flush` again (-1: no limit).
    var pollTimeout: Int { waiting.isEmpty ? -1 : Self.retryMilliseconds }

    /// How many replies wait here for all clients.
    var waitingCount: Int { waiting.values.reduce(0) { $0 + $1.messages.count - $1.next } }

    /// Whether a reply to the client that `route` leads to was dropped for want of budget
    /// since it last read everything kept for it: it gets nothing more until it reads.
    func isOverBudget(_ route: [[UInt8]]) -> Bool {
        guard let identity = route.first, let backlog = waiting[identity] else { return false }
        return backlog.refused
    }

    /// Sends `frames` (the route to a client, then the reply) now, or keeps it behind the
    /// replies already waiting for that client, or drops it (see `Delivery`).
    mutating func send(_ frames: [[UInt8]], on socket: borrowing ZMQSocket) throws(ZMQError) -> Delivery {
        guard let identity = frames.first else { return .gone }
        if waiting[identity] == nil {
            switch try socket.offer(frames) {
            case .sent: return .sent
            case .unroutable: return .gone
            case .full: break
            }
        }
        var backlog = waiting[identity] ?? Backlog()
        let size = frames.reduce(0) { $0 + $1.count }
        guard !backlog.refused, backlog.bytes == 0 || backlog.bytes + size <= budgetBytes else {
            backlog.refused = true
            waiting[identity] = backlog
            return .overBudget
        }
        backlog.messages.append(frames)
        backlog.bytes += size
        waiting[identity] = backlog
        return .kept
    }

    /// Hands on every waiting reply whose client's queue takes it now, in order per client;
    /// forgets what waits for a client that is gone.
    mutating func flush(on socket: borrowing ZMQSocket) throws(ZMQError) {
        for identity in Array(waiting.keys) {
            guard var backlog = waiting[identity] else { continue }
            var gone = false
            sending: while backlog.next < backlog.messages.count {
                let message = backlog.messages[backlog.next]
                switch try socket.offer(message) {
                case .sent:
                    backlog.bytes -= message.reduce(0) { $0 + $1.count }
                    backlog.messages[backlog.next] = []
                    backlog.next += 1
                case .full: break sending
                case .unroutable:
                    gone = true
                    break sending
                }
            }
            if gone || backlog.next == backlog.messages.count {
                waiting[identity] = nil
            } else {
                if backlog.next > 64 {
                    backlog.messages.removeFirst(backlog.next)
                    backlog.next = 0
                }
                waiting[identity] = backlog
            }
        }
    }

    /// Flushes until nothing waits or `milliseconds` have passed (a clean stop).
    mutating func drain(on socket: borrowing ZMQSocket, forMilliseconds milliseconds: Int) throws(ZMQError) {
        let deadline = MonotonicClock.milliseconds() + Int64(milliseconds)
        try flush(on: socket)
        while !waiting.isEmpty && MonotonicClock.milliseconds() < deadline {
            usleep(UInt32(Self.retryMilliseconds * 1_000))
            try flush(on: socket)
        }
    }
}
