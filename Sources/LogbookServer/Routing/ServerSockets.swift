import LogbookZMQ

/// How Logbook's servers set up their sockets, CURVE included when the process has
/// `ServerSecurity` (every server socket of such a process is a CURVE server; the process's
/// ZAP handler must be bound first, `ZAPThread`).
enum ServerSockets {
    static let highWaterMark: Int32 = 100_000

    /// A bound ROUTER that refuses to send to vanished peers rather than dropping silently,
    /// and caps message sizes.
    static func router(_ context: ZMQContext, at endpoint: String, security: ServerSecurity? = nil) throws(ZMQError)
        -> ZMQSocket
    {
        let socket = try ZMQSocket(context, .router)
        try socket.set(.routerMandatory, 1)
        try socket.setMaximumMessageSize(FrameLimit.largest)
        try socket.set(.sendHighWaterMark, highWaterMark)
        try socket.set(.receiveHighWaterMark, highWaterMark)
        try security?.secureServer(socket, domain: .requests)
        try socket.bind(endpoint)
        return socket
    }

    /// A bound PUB socket for the change feed. `retryingFor` milliseconds, a bind that finds
    /// the endpoint still taken (the socket this one replaces is being closed by libzmq's
    /// I/O thread) is tried again.
    static func publisher(
        _ context: ZMQContext, at endpoint: String, security: ServerSecurity?, retryingFor patience: Int = 0
    ) throws(ZMQError) -> ZMQSocket {
        let socket = try ZMQSocket(context, .publisher)
        try socket.set(.sendHighWaterMark, highWaterMark)
        try socket.set(.linger, 200)
        try security?.secureServer(socket, domain: .feed)
        try EndpointRebinding.bind(socket, endpoint, retryingFor: patience)
        return socket
    }
}
