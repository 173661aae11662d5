import LogbookZMQ

/// What a load client sends: the request bytes of client `client`'s `sequence`th request.
/// The request's id must start with the sequence number and a `-` (`"17-…"`), which is how
/// a reply is matched to its request. Pure, so any load thread can call it.
protocol LoadRequests: Sendable {
    func request(client: Int, sequence: Int) -> [UInt8]
}

/// One load run: how many DEALER clients on how many threads, how they send (each keeping
/// a window of requests in flight, or paced to a rate regardless of replies), for how
/// long, and what they observe besides reply times.
struct LoadPlan: Sendable {
    enum Pacing: Sendable {
        /// Each client keeps `window` requests in flight: a reply lets the next one go.
        case closedLoop(window: Int)
        /// The clients together send `perSecond` requests a second on a fixed schedule
        /// (open loop), each with at most `maximumInFlight` unanswered.
        case paced(perSecond: Double, maximumInFlight: Int)
    }

    enum Length: Sendable {
        case seconds(Double)
        case requestsPerClient(Int)
    }

    var endpoint: String
    /// Further servers every client also connects to (several workers sharing one log). A
    /// DEALER hands each request to the next of its connections in turn; `ZMQ_IMMEDIATE`
    /// keeps it to connections that are up, so requests spread evenly over the servers.
    var otherEndpoints: [String] = []
    var clients: Int
    var threads: Int
    var pacing: Pacing
    var length: Length
    var requests: any LoadRequests
    /// When set, the first thread also subscribes to this feed and records when each
    /// position arrives; replies are then scanned for their events' positions.
    var feedEndpoint: String?
    /// CURVE keys every socket of the run presents (a secured service); nil for plain sockets.
    var curve: CurveClientKeys?
    /// How long to wait for replies still missing after the last request.
    var drainSeconds: Double = 30
}

/// A command reply's event as the client saw it: its position, when the command was sent
/// and when the reply arrived (monotonic nanoseconds).
struct ReplyMark: Sendable {
    var position: Int64
    var sentAt: UInt64
    var repliedAt: UInt64
}

/// What a load run observed, summed over its clients.
struct LoadResult: Sendable {
    var sent = 0
    var completed = 0
    var rejected = 0
    var unmatched = 0
    var rejections: [String: Int] = [:]
    /// Per completed request: reply time minus send time, nanoseconds.
    var latencies: [Int64] = []
    var startedAt: UInt64 = 0
    /// When the last reply arrived.
    var endedAt: UInt64 = 0
    var requestBytes = 0
    var replyBytes = 0
    var replyMarks: [ReplyMark] = []
    /// Feed position → when it arrived.
    var feedArrivals: [Int64: UInt64] = [:]
    var errors: [String] = []

    var seconds: Double { endedAt > startedAt ? Double(endedAt - startedAt) / 1e9 : 0 }
    var perSecond: Double { seconds > 0 ? Double(completed) / seconds : 0 }
    var unanswered: Int { sent - completed }
    var meanRequestBytes: Int { sent > 0 ? requestBytes / sent : 0 }
    var meanReplyBytes: Int { completed > 0 ? replyBytes / completed : 0 }

    mutating func merge(_ other: LoadResult) {
        sent += other.sent
        completed += other.completed
        rejected += other.rejected
        unmatched += other.unmatched
        rejections.merge(other.rejections, uniquingKeysWith: +)
        latencies += other.latencies
        startedAt = startedAt == 0 ? other.startedAt : min(startedAt, other.startedAt)
        endedAt = max(endedAt, other.endedAt)
        requestBytes += other.requestBytes
        replyBytes += other.replyBytes
        replyMarks += other.replyMarks
        feedArrivals.merge(other.feedArrivals) { min($0, $1) }
        errors += other.errors
    }
}
