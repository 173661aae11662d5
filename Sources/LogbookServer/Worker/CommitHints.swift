import LogbookApplication
import LogbookZMQ

/// A worker's hints to the feed processes (PostgreSQL): a PUB socket connected to every
/// feed process's hints endpoint (a PUB sends each message to every peer it connected
/// to), telling them the last position each commit appended. A feed process that is down,
/// slow to connect or behind its high-water mark simply misses the hint and finds the
/// events by its poll. Not a publisher of events: the worker binds no feed on PostgreSQL.
struct CommitHints: ~Copyable {
    private let socket: ZMQSocket

    /// Connects to each of `endpoints` (none is allowed: the feed processes then poll); with
    /// `security`, as a CURVE client with the worker's own key (a `writer` on the feed processes).
    init(_ context: ZMQContext, connectingTo endpoints: [String], security: CurveClientKeys? = nil) throws(ZMQError) {
        let socket = try ZMQSocket(context, .publisher)
        try socket.set(.sendHighWaterMark, 1_000)
        try socket.set(.linger, 0)
        try socket.secure(security)
        for endpoint in endpoints { try socket.connect(endpoint) }
        self.socket = socket
    }
}

extension CommitHints: CommitAnnouncer {
    /// The last position the batch appended, or nil when it appended nothing.
    mutating func prepare(_ events: [RecordedEvent], envelopes: [Int64: [UInt8]]) -> Int64? {
        events.last?.position
    }

    /// One hint a batch: it says where the head is, not what is in it.
    static var announcesEachCommand: Bool { false }

    /// Sends the hint; a PUB never blocks, it drops for a peer that cannot take it.
    func announce(_ position: Int64?) throws(ZMQError) -> Int {
        if let position { try socket.send(CommitHint.frames(position: position), wait: false) }
        return 0
    }

    /// Nothing to do: the hints socket connects out; the feed processes check it.
    mutating func allowListReloaded() throws(ZMQError) -> Bool { false }

    var isReady: Bool { true }

    func finish(lingering milliseconds: Int) throws(ZMQError) {
        try socket.set(.linger, Int32(milliseconds))
    }
}
