import LogbookApplication
import LogbookWire
import LogbookZMQ

/// The worker's PUB socket. It publishes each committed event as `[topic][envelope]`, in
/// position order, where the envelope also carries `previous`: for every topic, a position
/// such that the log holds no event of that topic after it and before this event. A
/// subscriber to any subset of topics that has seen everything up to position P knows it
/// missed nothing when every subscribed topic's `previous` is ≤ P; otherwise it reads the
/// hole from the log before applying anything newer.
///
/// With CURVE on, libzmq never checks an admitted subscriber again and a PUB socket cannot
/// drop one peer, so after the allow-list is reloaded `rebind()` closes the socket and binds
/// a new one: every subscriber reconnects through the ZAP handler, a revoked key is refused,
/// and the others fill what they missed meanwhile from the log (the `previous` marks go on).
struct FeedPublisher: ~Copyable {
    /// How long a re-bind may wait for the old socket's endpoint to be released.
    static let rebindPatienceMilliseconds = 5_000
    /// The largest event envelope sent on the feed. A larger event gets no feed message:
    /// subscribers read it from the log (the next message of its topic, or the idle read,
    /// shows the hole). With `ServerSockets.feedQueue` messages queued per subscriber, this
    /// bounds what a subscriber that does not read pins to `feedQueue` × `largestEnvelope`.
    static let largestEnvelope = 8 << 10
    /// How long its owner waits before trying again to bind a feed whose re-bind failed.
    static let rebindRetryMilliseconds = 1_000

    private var socket: ZMQSocket?
    private let context: ZMQContext
    private let endpoint: String
    private let security: ServerSecurity?
    /// Counts the subscribers connected to the socket (and to each one bound anew), if given.
    private let subscribers: ConnectionCount?
    /// Per topic, the position of the last event published on it (or the head at start).
    private var previous: [FeedTopic: Int64]

    /// Binds the PUB socket (a CURVE server with `security`). `head` is the log's last
    /// position: no event after it has been published yet, so it is every topic's starting `previous`.
    init(
        _ context: ZMQContext, at endpoint: String, head: Int64, security: ServerSecurity? = nil,
        subscribers: ConnectionCount? = nil
    ) throws(ZMQError) {
        let socket = try ServerSockets.publisher(context, at: endpoint, security: security)
        try subscribers?.monitor(socket, in: context)
        self.socket = consume socket
        self.subscribers = subscribers
        self.context = context
        self.endpoint = endpoint
        self.security = security
        previous = Dictionary(uniqueKeysWithValues: FeedTopic.allCases.map { ($0, head) })
    }

    /// Closes the socket and binds a new one on the same endpoint, so that every subscriber
    /// goes through the handshake again. On an error there is no socket until the next
    /// `rebind()`; messages published meanwhile are lost (subscribers read them from the log).
    mutating func rebind() throws(ZMQError) {
        socket = nil
        isBound = false
        let socket = try ServerSockets.publisher(
            context, at: endpoint, security: security, retryingFor: Self.rebindPatienceMilliseconds)
        try subscribers?.monitor(socket, in: context)
        self.socket = consume socket
        isBound = true
    }

    /// Whether the socket is bound (false after a re-bind failed).
    private(set) var isBound = true

    /// The feed messages for events already committed, which must come in position order,
    /// advancing every topic's mark at once, before anything is sent: an event that is then
    /// not sent (a socket error, a reply that failed first) leaves a mark past it, so the
    /// next message of its topic reveals the hole. Events of internal categories (email
    /// claims) get no message; an event that cannot be written, or whose envelope is larger
    /// than `largestEnvelope`, gets none either (it is read from the log instead).
    /// `envelopes` holds each event's envelope as bytes (by position, as `EnvelopeWriter`
    /// writes them), written once for the replies and the feed; an event without one gets
    /// no message. The feed envelope is that envelope with `"previous":{…}` as its last member
    /// (`FeedMessage.frames`).
    mutating func messages(for events: [RecordedEvent], envelopes: [Int64: [UInt8]]) -> [[[UInt8]]] {
        var messages: [[[UInt8]]] = []
        messages.reserveCapacity(events.count)
        for event in events {
            guard let topic = FeedTopic(stream: event.stream) else { continue }
            // The marks written are those before this event; its own topic's mark moves past it
            // whether or not it gets a message.
            defer { previous[topic] = event.position }
            guard let envelope = envelopes[event.position], envelope.last == UInt8(ascii: "}"),
                envelope.count <= Self.largestEnvelope
            else { continue }
            messages.append(FeedMessage.frames(topic: topic, envelope: envelope, previous: previous))
        }
        return messages
    }

    /// Sets how long the socket keeps sending what it holds once closed (a clean stop).
    func linger(_ milliseconds: Int) throws(ZMQError) {
        try socket?.set(.linger, Int32(milliseconds))
    }

    /// Publishes messages made by `messages(for:)`; returns how many were sent.
    func publish(_ messages: [[[UInt8]]]) throws(ZMQError) -> Int {
        guard isBound else { return 0 }
        for message in messages { try socket?.send(message) }
        return messages.count
    }
}
