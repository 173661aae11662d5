import LogbookZMQ

/// How Logbook's servers set up their sockets, CURVE included when the process has
/// `ServerSecurity` (every server socket of such a process is a CURVE server; the process's
/// ZAP handler must be bound first, `ZAPThread`).
enum ServerSockets {
    static let highWaterMark: Int32 = 100_000

    /// How many replies libzmq queues for one client on each kind of ROUTER, chosen by the
    /// largest reply of that socket so that the queue pins a few MiB at most; what does not
    /// fit waits in the loop's `ReplyOutbox`, bounded by bytes.
    enum ReplyQueue: Int32 {
        /// Command replies: one command's events (a request is at most `WireRequest.maximumSize`).
        case commands = 16
        /// `ReadLog` pages (at most `LogReader.pageByteBudget` of payload each).
        case logPages = 2
        /// Query answers and statuses.
        case queries = 8
        /// The groups socket: a member's deliveries (each an event's envelope) and replies. A
        /// member holds at most its `maxInFlight` deliveries, so its queue holds no more than
        /// that in deliveries; a smaller queue would hand a member only a few deliveries each
        /// time the loop wakes, whatever it may hold.
        case deliveries = 1_024
    }

    /// A bound ROUTER that refuses to send to vanished peers rather than dropping silently,
    /// and caps message sizes. It queues `replies` messages per client (`ReplyQueue`); a
    /// non-blocking send beyond that says `full`, for the loop's `ReplyOutbox`.
    static func router(
        _ context: ZMQContext, at endpoint: String, replies: ReplyQueue, security: ServerSecurity? = nil
    ) throws(ZMQError) -> ZMQSocket {
        let socket = try ZMQSocket(context, .router)
        try socket.set(.routerMandatory, 1)
        try socket.setMaximumMessageSize(FrameLimit.largest)
        try socket.set(.sendHighWaterMark, replies.rawValue)
        try socket.set(.receiveHighWaterMark, highWaterMark)
        try security?.secureServer(socket, domain: .requests)
        try socket.bind(endpoint)
        return socket
    }

    /// How many feed messages a PUB queues for one subscriber: one whole batch of a worker
    /// (its largest, 2,048 commands), each at most `FeedPublisher.largestEnvelope`. A PUB
    /// drops what a subscriber cannot take; the subscriber reads that hole from the log.
    static let feedQueue: Int32 = 2_048

    /// A bound PUB socket for the change feed. `retryingFor` milliseconds, a bind that finds
    /// the endpoint still taken (the socket this one replaces is being closed by libzmq's
    /// I/O thread) is tried again.
    static func publisher(
        _ context: ZMQContext, at endpoint: String, security: ServerSecurity?, retryingFor patience: Int = 0
    ) throws(ZMQError) -> ZMQSocket {
        let socket = try ZMQSocket(context, .publisher)
        try socket.set(.sendHighWaterMark, feedQueue)
        try socket.set(.linger, 200)
        try security?.secureServer(socket, domain: .feed)
        try EndpointRebinding.bind(socket, endpoint, retryingFor: patience)
        return socket
    }
}
