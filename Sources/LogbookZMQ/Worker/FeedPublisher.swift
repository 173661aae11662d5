import LogbookApplication
import LogbookJSON

/// The worker's PUB socket. It publishes each committed event as `[topic][envelope]`, in
/// position order, where the envelope also carries `previous`: for every topic, a position
/// such that the log holds no event of that topic after it and before this event. A
/// subscriber to any subset of topics that has seen everything up to position P knows it
/// missed nothing when every subscribed topic's `previous` is ≤ P; otherwise it reads the
/// hole from the log before applying anything newer.
struct FeedPublisher: ~Copyable {
    private let socket: ZMQSocket
    /// Per topic, the position of the last event published on it (or the head at start).
    private var previous: [FeedTopic: Int64]

    /// Binds the PUB socket. `head` is the log's last position: no event after it has
    /// been published yet, so it is every topic's starting `previous`.
    init(_ context: ZMQContext, at endpoint: String, head: Int64) throws(ZMQError) {
        let socket = try ZMQSocket(context, .publisher)
        try socket.set(.sendHighWaterMark, ServerSockets.highWaterMark)
        try socket.set(.linger, 200)
        try socket.bind(endpoint)
        self.socket = socket
        previous = Dictionary(uniqueKeysWithValues: FeedTopic.allCases.map { ($0, head) })
    }

    /// Publishes events already committed, which must come in position order. Events of
    /// internal categories (email claims) are not published. Returns how many were sent.
    mutating func publish(_ events: [RecordedEvent]) throws(ZMQError) -> Int {
        var sent = 0
        for event in events {
            guard let topic = FeedTopic(category: event.category) else { continue }
            var marks = JSONObject()
            for name in FeedTopic.allCases { marks[name.rawValue] = .int(Int(previous[name] ?? 0)) }
            previous[topic] = event.position
            // An event that cannot be written is not sent; the next message of its topic then
            // names its position as `previous`, so subscribers read it from the log instead.
            guard case .object(var envelope) = try? WireEncoding.envelope(event) else { continue }
            envelope["previous"] = .object(marks)
            try socket.send([Array(topic.rawValue.utf8), JSONWriter.bytes(.object(envelope))])
            sent += 1
        }
        return sent
    }
}
