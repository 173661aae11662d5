public import LogbookApplication
import LogbookJSON
public import LogbookWire
public import LogbookZMQ

/// A `ReadLog` client for one thread: a DEALER to the worker's log socket, one request at
/// a time, with a timeout. After a timeout the socket is replaced (the Lazy Pirate way),
/// so a late reply to an abandoned request can never be taken for a new one, and the
/// requests sent ahead on the old socket are forgotten (each is sent again when read).
public struct LogReadChannel: ~Copyable {
    private let context: ZMQContext
    private let endpoint: String
    private let timeoutMilliseconds: Int
    private let security: CurveClientKeys?
    private var socket: ZMQSocket
    private var counter = 0
    /// Requests sent ahead (`requestAhead`), oldest first, whose replies matching reads take.
    private var ahead: [(id: String, from: Int64, limit: Int, topics: [FeedTopic]?)] = []
    /// At most this many requests are sent ahead.
    public static let maximumAhead = 2

    /// A channel to the log socket at `endpoint`; with `security`, a CURVE client of it.
    public init(
        _ context: ZMQContext, endpoint: String, timeoutMilliseconds: Int, security: CurveClientKeys? = nil
    ) throws(ZMQError) {
        self.context = context
        self.endpoint = endpoint
        self.timeoutMilliseconds = timeoutMilliseconds
        self.security = security
        socket = try Self.connect(context, endpoint, security)
    }

    private static func connect(_ context: ZMQContext, _ endpoint: String, _ security: CurveClientKeys?)
        throws(ZMQError) -> ZMQSocket
    {
        let socket = try ZMQSocket(context, .dealer)
        try socket.setMaximumMessageSize(FrameLimit.largest * 4)
        try socket.secure(security)
        try socket.connect(endpoint)
        return socket
    }

    /// Sends the request for a page the caller expects to read soon, so the worker reads it
    /// while the caller is still busy (up to `maximumAhead` pages, each asked once). A later
    /// `read` of exactly such a page takes its reply; a read of any other page drops the
    /// requests sent ahead of it, and their replies, when they come, are dropped like any
    /// reply to an abandoned request.
    public mutating func requestAhead(from: Int64, limit: Int, topics: [FeedTopic]?) {
        guard ahead.count < Self.maximumAhead, !ahead.contains(where: { $0.from == from }) else { return }
        // A failed send is not an error here: the later read sends the request again.
        if let id = try? send(from: from, limit: limit, topics: topics) {
            ahead.append((id, from, limit, topics))
        }
    }

    private mutating func send(from: Int64, limit: Int, topics: [FeedTopic]?) throws(ZMQError) -> String {
        counter += 1
        let id = "readlog-\(counter)"
        let request = RequestDocument.readLog(id: id, from: from, limit: limit, topics: topics?.map(\.rawValue))
        try socket.send([[], JSONWriter.bytes(.object(request))])
        return id
    }

    /// Reads one page of the log.
    public mutating func read(from: Int64, limit: Int, topics: [FeedTopic]?) throws(FeedFollowError) -> LogPage {
        try read(from: from, limit: limit, topics: topics, Self.page)
    }

    /// Reads one page of the log and keeps it as the bytes it came in when it is in the
    /// worker's exact form (`EncodedLogPageReader`); any other reply goes through the
    /// general reader, which gives the page decoded or says what is wrong, as `read` does.
    /// The reply is received into `spare`'s storage, grown if need be (the bytes of a page
    /// the caller is done with), instead of fresh memory.
    public mutating func readEncoded(
        from: Int64, limit: Int, topics: [FeedTopic]?, reusing spare: consuming [UInt8] = []
    ) throws(FeedFollowError) -> FetchedLogPage {
        var spare = Optional(spare)
        return try read(
            from: from, limit: limit, topics: topics,
            receive: { socket throws(ZMQError) in try socket.receive(wait: false, reusing: spare.take() ?? []) },
            Self.encodedPage)
    }

    /// The page in a reply to request `id`, kept as its bytes when it is in the worker's exact
    /// form; nil for a reply to another request.
    private static func encodedPage(_ frames: [[UInt8]], id: String) throws(FeedFollowError) -> FetchedLogPage? {
        if let body = frames.last, let (replyId, page) = EncodedLogPageReader.page(body) {
            return replyId == id ? FetchedLogPage(page) : nil
        }
        return try page(frames, id: id).map { FetchedLogPage($0) }
    }

    /// Sends the request (unless it was sent ahead) and waits for its reply, which `page` reads.
    private mutating func read<Page>(
        from: Int64, limit: Int, topics: [FeedTopic]?,
        receive: (borrowing ZMQSocket) throws(ZMQError) -> [[UInt8]]? = { socket throws(ZMQError) in
            try socket.receive(wait: false)
        },
        _ page: ([[UInt8]], String) throws(FeedFollowError) -> Page?
    ) throws(FeedFollowError) -> Page {
        var sentAhead: String?
        if let match = ahead.firstIndex(where: { $0.from == from && $0.limit == limit && $0.topics == topics }) {
            sentAhead = ahead[match].id
            ahead.removeFirst(match + 1)
        } else {
            ahead.removeAll()
        }
        do {
            let id = try sentAhead ?? send(from: from, limit: limit, topics: topics)
            var remaining = timeoutMilliseconds
            while remaining > 0 {
                let started = MonotonicClock.milliseconds()
                let ready = try ZMQPoll.wait([socket.readable], timeoutMilliseconds: remaining)
                remaining -= Int(MonotonicClock.milliseconds() - started)
                guard ready[0], let frames = try receive(socket) else { continue }
                guard let page = try page(frames, id) else { continue }
                return page
            }
            // The requests sent ahead went out on the old socket: their replies cannot come
            // on the new one, so a read that took one would only wait out another timeout.
            ahead.removeAll()
            socket = try Self.connect(context, endpoint, security)
            throw FeedFollowError.logUnavailable("no ReadLog reply from \(endpoint) within \(timeoutMilliseconds) ms")
        } catch let error as ZMQError {
            throw error.isTerminated ? .stopped : .logUnavailable(error.description)
        } catch let error as FeedFollowError {
            throw error
        } catch {
            throw .logUnavailable("\(error)")
        }
    }

    /// The page in a reply to request `id`; nil for a reply to another request. A reply in
    /// the worker's own exact form is read straight from its bytes (`LogPageReader`); any
    /// other goes through the general reader, which gives the same page or says what is wrong.
    private static func page(_ frames: [[UInt8]], id: String) throws(FeedFollowError) -> LogPage? {
        if let body = frames.last, let (replyId, page) = LogPageReader.page(body) {
            return replyId == id ? page : nil
        }
        guard let body = frames.last, case .object(let reply)? = try? JSONParser.parse(body) else {
            throw .logUnavailable("the log socket sent a reply that is not JSON")
        }
        guard reply["id"] == .string(id) else { return nil }
        guard reply["ok"] == .bool(true) else {
            let message = reply["error"]?.objectValue?["message"]?.stringValue ?? "unknown error"
            throw .logRefused(message)
        }
        do {
            return try WireDecoding.logPage(from: reply)
        } catch {
            throw .logRefused("an unreadable ReadLog reply: \(error.message)")
        }
    }
}

/// Why following the feed could not go on.
public enum FeedFollowError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The log socket did not answer (in time); trying again later may work.
    case logUnavailable(String)
    /// The log socket answered with an error.
    case logRefused(String)
    /// The context was shut down.
    case stopped

    public var description: String {
        switch self {
        case .logUnavailable(let reason): "log unavailable: \(reason)"
        case .logRefused(let reason): "log read refused: \(reason)"
        case .stopped: "stopped"
        }
    }
}
