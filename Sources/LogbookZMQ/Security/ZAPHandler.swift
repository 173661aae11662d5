/// The ZAP handler (ZeroMQ RFC 27) of one process: a REP socket bound at
/// `inproc://zeromq.zap.01` in the process's context, which libzmq asks about every CURVE
/// handshake of every server socket of that context. Without it a CURVE server admits any
/// key, so a process binds it, on the thread that will serve it, before any server socket
/// binds, and refuses to start when it cannot.
///
/// It admits a CURVE client whose key is in the server's current allow-list (and, on the
/// feed, whose role may subscribe), with the key in Z85 as the user id and the role as the
/// `Role` property; it refuses everything else with 400 (status 500 for a request it cannot read).
public enum ZAPHandler {
    public static let endpoint = "inproc://zeromq.zap.01"
    /// How often, without requests, the observer hears `quiet()`.
    public static let quietMilliseconds = 1_000

    /// The handler's socket, bound. Call on the thread that then calls `serve`.
    public static func bind(_ context: ZMQContext) throws(ZMQError) -> ZMQSocket {
        let socket = try ZMQSocket(context, .reply)
        try socket.bind(endpoint)
        return socket
    }

    /// Answers requests until the context is shut down, calling `turned` after every wait
    /// (a request, or `waitMilliseconds` without one: at most `quietMilliseconds`).
    public static func serve(
        _ socket: borrowing ZMQSocket, security: ServerSecurity, observer: any ZAPObserver,
        waitMilliseconds: Int = quietMilliseconds, turned: () -> Void = {}
    ) {
        while true {
            do {
                let readable = try ZMQPoll.wait(
                    [socket.readable], timeoutMilliseconds: min(waitMilliseconds, quietMilliseconds))[0]
                turned()
                guard readable, let frames = try socket.receive(wait: false) else {
                    observer.quiet()
                    continue
                }
                let request = ZAPRequest(frames: frames)
                let reply =
                    request.map { decide($0, security: security, observer: observer) }
                    ?? ZAPReply(status: 500, text: "not a ZAP 1.0 request", userId: "", metadata: [])
                // A REP socket must answer before it can read the next request.
                try socket.send(reply.frames(requestId: frames.count > 1 ? frames[1] : []))
            } catch {
                if error.isTerminated { return }
            }
        }
    }

    /// The answer to one request, counted and reported.
    static func decide(_ request: ZAPRequest, security: ServerSecurity, observer: any ZAPObserver) -> ZAPReply {
        let key = request.credentials.first.flatMap { try? CurveKey(bytes: $0) }?.z85
        let (reply, role) = security.answer(
            mechanism: request.mechanism, key: key, credentialCount: request.credentials.count,
            domain: request.domain)
        if let key, let role {
            observer.admitted(key: key, role: role, address: request.address, domain: request.domain)
        } else {
            observer.refused(
                ZAPRefusal(key: key, address: request.address, domain: request.domain, reason: reply.text))
        }
        return reply
    }
}
