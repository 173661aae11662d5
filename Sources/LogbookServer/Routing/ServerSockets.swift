import LogbookZMQ

/// How Logbook's servers set up their sockets.
enum ServerSockets {
    static let highWaterMark: Int32 = 100_000

    /// A bound ROUTER that refuses to send to vanished peers rather than dropping silently,
    /// and caps message sizes.
    static func router(_ context: ZMQContext, at endpoint: String) throws(ZMQError) -> ZMQSocket {
        let socket = try ZMQSocket(context, .router)
        try socket.set(.routerMandatory, 1)
        try socket.setMaximumMessageSize(FrameLimit.largest)
        try socket.set(.sendHighWaterMark, highWaterMark)
        try socket.set(.receiveHighWaterMark, highWaterMark)
        try socket.bind(endpoint)
        return socket
    }
}
