import LogbookJSON
import LogbookZMQ
import Synchronization

/// What the async callers and the client's socket thread share: a queue of requests to
/// send, the continuations waiting for replies, and the pipe that wakes the thread. Only
/// this crosses threads; the sockets never leave the thread that made them.
final class ClientCore: Sendable {
    typealias Outcome = Result<JSONObject, LogbookClientError>

    /// A request handed to the socket thread.
    struct Submission: Sendable {
        var ticket: UInt64
        var server: ServerEndpoint
        var id: String
        var frame: [UInt8]
    }

    /// Work for the socket thread, taken in one piece.
    struct Work: Sendable {
        var submissions: [Submission]
        var cancellations: [UInt64]
        var closed: Bool
    }

    private struct State {
        var closed = false
        var nextTicket: UInt64 = 0
        var submissions: [Submission] = []
        var cancellations: [UInt64] = []
        var waiters: [UInt64: CheckedContinuation<Outcome, Never>] = [:]
    }

    let endpoints: ClientEndpoints
    let timeout: Duration
    let attempts: Int
    /// The client's CURVE keys and the servers' public key; nil: plain connections.
    let security: CurveClientKeys?
    let context: ZMQContext
    let wakeUp: WakeUpPipe
    private let state = Mutex(State())

    init(endpoints: ClientEndpoints, timeout: Duration, attempts: Int, security: CurveClientKeys?) throws(ZMQError) {
        self.security = security
        self.endpoints = endpoints
        self.timeout = timeout
        self.attempts = attempts
        context = try ZMQContext(ioThreads: 1)
        wakeUp = try WakeUpPipe()
    }

    /// Hands a request to the socket thread and waits for its outcome. Cancelling the
    /// calling task fails it at once, whatever the socket thread is doing.
    func submit(_ server: ServerEndpoint, id: String, frame: [UInt8]) async -> Outcome {
        let ticket = state.withLock { state in
            state.nextTicket += 1
            return state.nextTicket
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                let refusal: LogbookClientError? = state.withLock { state in
                    if state.closed { return .closed }
                    // A cancellation before this point found no waiter to fail: fail here.
                    if Task.isCancelled { return .cancelled }
                    state.waiters[ticket] = continuation
                    state.submissions.append(Submission(ticket: ticket, server: server, id: id, frame: frame))
                    return nil
                }
                if let refusal {
                    continuation.resume(returning: .failure(refusal))
                } else {
                    wakeUp.wake()
                }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                let waiter = state.waiters.removeValue(forKey: ticket)
                if waiter != nil {
                    // Not taken by the socket thread yet: it is never sent. Otherwise the
                    // thread forgets it (no resend, and a late reply finds nobody).
                    if let queued = state.submissions.firstIndex(where: { $0.ticket == ticket }) {
                        state.submissions.remove(at: queued)
                    } else {
                        state.cancellations.append(ticket)
                    }
                }
                return waiter
            }
            if let waiter {
                waiter.resume(returning: .failure(.cancelled))
                wakeUp.wake()
            }
        }
    }

    /// Everything queued for the socket thread since it last asked.
    func takeWork() -> Work {
        state.withLock { state in
            defer {
                state.submissions = []
                state.cancellations = []
            }
            return Work(submissions: state.submissions, cancellations: state.cancellations, closed: state.closed)
        }
    }

    /// Resumes the caller waiting on `ticket`, if it still waits (it may have been cancelled).
    func finish(_ ticket: UInt64, _ outcome: Outcome) {
        let waiter = state.withLock { $0.waiters.removeValue(forKey: ticket) }
        waiter?.resume(returning: outcome)
    }

    /// Refuses new requests, fails every waiting one with `error` and wakes the socket
    /// thread so it closes its sockets and ends. Safe to call more than once.
    func close(failing error: LogbookClientError = .closed) {
        let waiters = state.withLock { state in
            state.closed = true
            state.submissions = []
            defer { state.waiters = [:] }
            return state.waiters
        }
        for waiter in waiters.values { waiter.resume(returning: .failure(error)) }
        wakeUp.wake()
    }
}
