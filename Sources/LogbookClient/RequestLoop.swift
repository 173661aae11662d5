import LogbookJSON
import LogbookZMQ

/// The client's socket thread: one DEALER per server it was asked to reach, every
/// request sent as `[empty][json]`, every reply `[empty][json]` matched to its request by
/// the `id` it echoes, any number of requests in flight.
///
/// The commands DEALER connects to every listed worker with `ZMQ_IMMEDIATE`: libzmq
/// round-robins requests over the workers whose connection has completed and takes none
/// while no connection is up, so a request never waits on a worker that is down while
/// another is up; with none up it waits in its `RequestChannel` until one is (or until its
/// attempt's deadline).
///
/// Lazy Pirate retries: when a request's attempt times out, the socket it went out on is
/// closed (a late reply to it can never be read, so never taken for a newer one), a fresh
/// socket is opened, and every request still waiting on that server is sent again with
/// the same id. A fresh commands socket reaches only the workers that complete a new
/// connection, so a retry lands on a live worker when there is one; a worker that did
/// take the first attempt answers a repeated id with its first outcome (ARCHITECTURE §10).
/// Requests keep their own attempt count and deadline: one that did not time out is
/// resent within its current attempt. After its last attempt a request fails with
/// `timedOut`.
///
/// Everything here lives on the thread that runs `run()`; the shared `ClientCore` is the
/// only way in or out.
final class RequestLoop {
    private let core: ClientCore
    private var channels: [ServerEndpoint: RequestChannel] = [:]
    /// Where each ticket waits, to forget it when its caller is cancelled.
    private var places: [UInt64: (server: ServerEndpoint, id: String)] = [:]
    private var sequence: UInt64 = 0
    /// No deadline is earlier than this (it may be stale, never late); nil: nothing waits.
    private var earliestDeadline: ContinuousClock.Instant?

    init(core: ClientCore) {
        self.core = core
    }

    /// Serves requests until the client is closed, then closes its sockets.
    func run() {
        while true {
            let work = core.takeWork()
            if work.closed { break }
            for submission in work.submissions { start(submission) }
            for ticket in work.cancellations { forget(ticket) }
            expireAttempts(now: .now)

            let open = ServerEndpoint.allCases.compactMap { channels[$0] }
            let ready: [PollEvents]
            do {
                ready = try ZMQPoll.ready(
                    [core.wakeUp.readable] + open.map(\.pollItem), timeoutMilliseconds: pollTimeout(now: .now))
            } catch {
                core.close(failing: .transport("\(error)"))
                break
            }
            if ready[0].contains(.readable) { core.wakeUp.drain() }
            for (channel, events) in zip(open, ready.dropFirst()) {
                if events.contains(.writable) { flush(channel) }
                if events.contains(.readable) { readReplies(on: channel) }
            }
        }
        channels = [:]
        places = [:]
    }

    private func start(_ submission: ClientCore.Submission) {
        let channel: RequestChannel
        if let existing = channels[submission.server] {
            channel = existing
        } else {
            do {
                channel = RequestChannel(server: submission.server, socket: try openSocket(to: submission.server))
            } catch {
                core.finish(submission.ticket, .failure(.transport("\(error)")))
                return
            }
            channels[submission.server] = channel
        }
        guard channel.pending[submission.id] == nil else {
            let reason = "a request with id \"\(submission.id)\" is already waiting for the \(submission.server) server"
            core.finish(submission.ticket, .failure(.invalidRequest(reason)))
            return
        }
        sequence += 1
        let deadline = ContinuousClock.now + core.timeout
        channel.add(
            RequestChannel.Pending(
                ticket: submission.ticket, id: submission.id, frame: submission.frame, attempt: 1, deadline: deadline,
                sequence: sequence))
        places[submission.ticket] = (submission.server, submission.id)
        earliestDeadline = min(earliestDeadline ?? deadline, deadline)
        flush(channel)
    }

    private func openSocket(to server: ServerEndpoint) throws(ZMQError) -> ZMQSocket {
        let socket = try ZMQSocket(core.context, .dealer)
        // No limit of libzmq's own: the pending table already holds every queued request.
        try socket.set(.sendHighWaterMark, 0)
        try socket.secure(core.security)
        switch server {
        case .commands:
            // Requests go only to workers whose connection completed (FIELD-NOTES: a DEALER
            // otherwise queues on connections that are still down).
            try socket.set(.immediate, 1)
            for endpoint in core.endpoints.commands.endpoints { try socket.connect(endpoint) }
        case .queries, .log, .groups:
            try socket.connect(core.endpoints.address(of: server))
        }
        return socket
    }

    /// Hands the channel's unsent requests to libzmq without ever blocking this thread;
    /// what finds no connection yet waits for the next writable poll or its deadline.
    private func flush(_ channel: RequestChannel) {
        for (pending, error) in channel.flush() {
            places[pending.ticket] = nil
            core.finish(pending.ticket, .failure(.transport("\(error)")))
        }
    }

    private func remove(_ id: String, from channel: RequestChannel) {
        guard let pending = channel.remove(id) else { return }
        places[pending.ticket] = nil
    }

    /// The caller gave up: neither answer nor resend this request.
    private func forget(_ ticket: UInt64) {
        guard let place = places[ticket], let channel = channels[place.server],
            channel.pending[place.id]?.ticket == ticket
        else { return }
        remove(place.id, from: channel)
    }

    private func expireAttempts(now: ContinuousClock.Instant) {
        guard let earliest = earliestDeadline, earliest <= now else { return }
        for server in ServerEndpoint.allCases {
            if let channel = channels[server] { expireAttempts(on: channel, now: now) }
        }
        earliestDeadline = channels.values.lazy.flatMap(\.pending.values).map(\.deadline).min()
    }

    private func expireAttempts(on channel: RequestChannel, now: ContinuousClock.Instant) {
        var expired = false
        for (id, pending) in channel.pending where pending.deadline <= now {
            expired = true
            if pending.attempt >= core.attempts {
                remove(id, from: channel)
                core.finish(pending.ticket, .failure(.timedOut(channel.server, attempts: core.attempts)))
            } else {
                channel.renew(id, deadline: now + core.timeout)
            }
        }
        guard expired else { return }
        // The socket that timed out goes, even with nothing left to resend: a late reply on
        // it could otherwise answer a later request that reuses an id.
        guard !channel.pending.isEmpty else {
            channels[channel.server] = nil
            return
        }
        do {
            channel.replaceSocket(with: try openSocket(to: channel.server))
        } catch {
            fail(channel, .transport("\(error)"))
            return
        }
        flush(channel)
    }

    /// Delivers every reply waiting on the socket. Replies that are not `[empty][json
    /// object with a string id]`, or whose id waits for nothing, are dropped.
    private func readReplies(on channel: RequestChannel) {
        while true {
            let frames: [[UInt8]]?
            do {
                frames = try channel.socket.receive(wait: false)
            } catch {
                fail(channel, .transport("\(error)"))
                return
            }
            guard let frames else { return }
            guard frames.count == 2, frames[0].isEmpty,
                case .object(let reply)? = try? JSONParser.parse(frames[1]),
                case .string(let id)? = reply["id"], let pending = channel.pending[id]
            else { continue }
            remove(id, from: channel)
            core.finish(pending.ticket, .success(reply))
        }
    }

    /// Fails every request waiting on `channel` and closes its socket.
    private func fail(_ channel: RequestChannel, _ error: LogbookClientError) {
        for pending in channel.pending.values {
            remove(pending.id, from: channel)
            core.finish(pending.ticket, .failure(error))
        }
        channels[channel.server] = nil
    }

    /// Milliseconds until the earliest deadline, rounded up; -1 when nothing waits.
    private func pollTimeout(now: ContinuousClock.Instant) -> Int {
        guard let earliest = earliestDeadline else { return -1 }
        let left = earliest - now
        guard left > .zero else { return 0 }
        let (seconds, attoseconds) = left.components
        return Int(seconds) * 1_000 + Int((attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }
}
