public import LogbookApplication
public import LogbookWire
public import LogbookZMQ

/// Follows the change feed for some topics without ever missing or repeating an event,
/// on the thread that owns it.
///
/// It keeps a cursor: every event of its topics at or before the cursor has been handed
/// out, in position order. A live message is handed out only when each subscribed topic's
/// `previous` mark is at or before the cursor (nothing can be missing in between); a
/// message that shows a hole, a message that cannot be read, a fresh start and an explicit
/// `requestCatchUp()` all switch the follower to reading the log (`ReadLog`) from the
/// cursor up to the head, page by page, before it takes live messages again. Live
/// messages at or before the cursor are duplicates and are dropped. This also covers the
/// slow joiner: whatever was published before the subscription took effect is read from
/// the log.
public struct FeedFollower: ~Copyable {
    public static let pageSize = LogReadRequest.maximumLimit
    /// How many events one log read asks for (`pageSize` unless a test asks for less).
    public let pageSize: Int
    static let maximumLiveBatch = 2_000
    /// A live batch also ends once its messages reach this many bytes (one more message may
    /// go over), so that a batch of the largest posts stays bounded in memory.
    static let maximumLiveBatchBytes = 16 << 20
    static let receiveQueueLimit: Int32 = 10_000

    private let subscriber: ZMQSocket
    private var logChannel: LogReadChannel
    public let topics: [FeedTopic]
    /// True when the follower follows every topic, so it needs no event of a page of the log
    /// left out (those of no topic, such as e-mail claims, are there, and project to nothing).
    public let followsEveryTopic: Bool
    /// Every event of `topics` at or before this position has been handed out.
    public private(set) var cursor: Int64
    /// True while the follower reads the log rather than the live feed.
    public private(set) var needsCatchUp = true
    /// The log's head as the last log read reported it.
    public private(set) var lastKnownHead: Int64 = 0
    /// How many holes the live feed showed so far.
    public private(set) var holesDetected = 0
    /// After this long without a live message, `waitForNext` reads the log once (a PUB
    /// socket drops silently, so a lost last message has nothing after it to reveal it).
    public let idleCatchUpMilliseconds: Int
    private var lastHeard = MonotonicClock.milliseconds()
    /// The bytes of a page the owner is done with (`recycle(_:)`), which the next page of
    /// `nextLogPage()` is received into.
    private var spare: [UInt8] = []

    /// Subscribes to `topics` on `feed` and prepares to read `log`; starts by catching up
    /// from `cursor + 1`. With `security`, both sockets are CURVE clients with those keys.
    public init(
        _ context: ZMQContext, feed: String, log: String, topics: [FeedTopic], cursor: Int64,
        logTimeoutMilliseconds: Int = 3_000, idleCatchUpMilliseconds: Int = 1_000, pageSize: Int = Self.pageSize,
        security: CurveClientKeys? = nil
    ) throws(ZMQError) {
        let subscriber = try ZMQSocket(context, .subscriber)
        // Bounded: whatever the queue drops is a hole the follower fills from the log, and
        // the queue is not read while it catches up (feed messages may be large).
        try subscriber.set(.receiveHighWaterMark, Self.receiveQueueLimit)
        try subscriber.setMaximumMessageSize(FrameLimit.largest)
        for topic in topics { try subscriber.subscribe(topic.rawValue) }
        try subscriber.secure(security)
        try subscriber.connect(feed)
        let logChannel = try LogReadChannel(
            context, endpoint: log, timeoutMilliseconds: logTimeoutMilliseconds, security: security)
        self.subscriber = subscriber
        self.logChannel = logChannel
        self.topics = topics
        followsEveryTopic = Set(topics) == Set(FeedTopic.allCases)
        self.cursor = cursor
        self.idleCatchUpMilliseconds = idleCatchUpMilliseconds
        self.pageSize = max(1, min(pageSize, LogReadRequest.maximumLimit))
    }

    /// The subscriber socket, for the owner's poll: when it is readable, call `next()`.
    public var readable: PollItem { subscriber.readable }

    /// Makes the next `next()` read the log up to its head first (after a restart of the
    /// worker, an idle spell, or a reader waiting for a position).
    public mutating func requestCatchUp() {
        needsCatchUp = true
    }

    /// Moves the cursor back to what the owner durably holds (after its write failed, or
    /// when it switches to another store), and catches up from there.
    public mutating func reset(cursor: Int64) {
        self.cursor = cursor
        needsCatchUp = true
    }

    /// Waits up to `timeoutMilliseconds` for live messages (not at all while catching up)
    /// or for one of `others` to become readable, then hands out what is there (possibly
    /// nothing), reading the log when the feed has been quiet for `idleCatchUpMilliseconds`.
    /// Returns the batch and, per item of `others`, whether it is readable.
    public mutating func waitForNext(timeoutMilliseconds: Int, alsoWatching others: [PollItem] = [])
        throws(FeedFollowError) -> (batch: FeedBatch, othersReady: [Bool])
    {
        var othersReady = Array(repeating: false, count: others.count)
        if !needsCatchUp {
            let ready: [Bool]
            do {
                ready = try ZMQPoll.wait([readable] + others, timeoutMilliseconds: timeoutMilliseconds)
            } catch {
                throw error.isTerminated ? .stopped : .logUnavailable("feed: \(error)")
            }
            othersReady = Array(ready.dropFirst())
            if !ready[0] {
                guard MonotonicClock.milliseconds() - lastHeard >= idleCatchUpMilliseconds else {
                    return (FeedBatch(events: [], through: cursor), othersReady)
                }
                needsCatchUp = true
            }
        }
        let batch = try next()
        lastHeard = MonotonicClock.milliseconds()
        return (batch, othersReady)
    }

    /// The next events in position order, all after the old cursor and gap-free; the
    /// cursor has moved to `through`. While catching up this is one page of the log;
    /// otherwise the live messages waiting now (possibly none), up to `maximumLiveBatch`
    /// events or `maximumLiveBatchBytes` bytes.
    public mutating func next() throws(FeedFollowError) -> FeedBatch {
        if needsCatchUp { return try readLogPage() }
        var events: [RecordedEvent] = []
        var bytes = 0
        while events.count < Self.maximumLiveBatch, bytes < Self.maximumLiveBatchBytes {
            let frames: [[UInt8]]?
            do {
                frames = try subscriber.receive(wait: false)
            } catch {
                // The cursor already counts what was collected: hand it out; the next call
                // meets the error again.
                if !events.isEmpty { break }
                throw error.isTerminated ? .stopped : .logUnavailable("feed: \(error)")
            }
            guard let frames else { break }
            guard let message = FeedMessage(frames: frames) else {
                needsCatchUp = true
                holesDetected += 1
                break
            }
            guard message.event.position > cursor else { continue }
            guard topics.allSatisfy({ (message.previous[$0] ?? .max) <= cursor }) else {
                needsCatchUp = true
                holesDetected += 1
                break
            }
            events.append(message.event)
            cursor = message.event.position
            bytes += frames.reduce(0) { $0 + $1.count }
        }
        return FeedBatch(events: events, through: cursor)
    }

    /// While catching up, for a follower of every topic: the next page of the log as the
    /// bytes it came in (`LogReadChannel.readEncoded`), so that a store applies it without a
    /// `RecordedEvent` per event, without its events at or before the cursor, and the
    /// position through which nothing is missing; the cursor moves there. Nil when the
    /// follower is not catching up or follows only some topics (`next()` serves both).
    /// Apply the page whole (`ReadModelStore.apply`), alone or joined with the pages after it
    /// (`JoinedEventBatch`), checked against the store's checkpoint; then hand it back with
    /// `recycle(_:)`.
    public mutating func nextLogPage() throws(FeedFollowError) -> (page: FetchedLogPage, through: Int64)? {
        guard needsCatchUp, followsEveryTopic else { return nil }
        let received = try logChannel.readEncoded(
            from: cursor + 1, limit: pageSize, topics: nil, reusing: takeSpare())
        let (page, through) = received.following(cursor)
        cursor = through
        finishLogRead(next: received.next, head: received.head, full: received.count == pageSize, asked: nil)
        lastHeard = MonotonicClock.milliseconds()
        return (page, cursor)
    }

    /// Keeps the bytes of a page from `nextLogPage()` the owner is done with, for the next one.
    public mutating func recycle(_ page: consuming FetchedLogPage) {
        if let bytes = page.reusableBytes() { spare = bytes }
    }

    private mutating func takeSpare() -> [UInt8] {
        var bytes: [UInt8] = []
        swap(&bytes, &spare)
        return bytes
    }

    private mutating func readLogPage() throws(FeedFollowError) -> FeedBatch {
        let asked = followsEveryTopic ? nil : topics
        let page = try logChannel.read(from: cursor + 1, limit: pageSize, topics: asked)
        let wanted = Set(topics.map(\.category))
        let events = page.events.filter { $0.position > cursor && wanted.contains($0.category) }
        cursor = max(cursor, page.next - 1, events.last?.position ?? 0)
        finishLogRead(next: page.next, head: page.head, full: page.events.count == pageSize, asked: asked)
        return FeedBatch(events: events, through: cursor)
    }

    /// After a page of the log (the cursor already moved past it): done catching up when it
    /// reached the head, else the next reads are asked for ahead.
    private mutating func finishLogRead(next: Int64, head: Int64, full: Bool, asked: [FeedTopic]?) {
        lastKnownHead = head
        if next > head {
            needsCatchUp = false
        } else {
            // More to read: the worker reads the next page while the owner applies this one,
            // and, after a page full to the limit of the whole log, the page after it too
            // (it starts right after a full next page; a wrong guess only costs a read).
            logChannel.requestAhead(from: cursor + 1, limit: pageSize, topics: asked)
            if asked == nil && full {
                logChannel.requestAhead(from: cursor + 1 + Int64(pageSize), limit: pageSize, topics: nil)
            }
        }
    }
}

/// Events handed out by a `FeedFollower`, in position order, and the position through
/// which nothing of its topics is missing.
public struct FeedBatch: Sendable {
    public var events: [RecordedEvent]
    public var through: Int64
}
