import LogbookApplication
import LogbookZMQ

/// What the command loop does with a batch's new events once they are committed, in two
/// steps around the replies: `prepare` before the replies it follows are sent (so whatever
/// it records, such as the feed's per-topic marks, moves past the events even if a reply
/// then fails), `announce` after them: no event is announced before its command's reply
/// was handed to libzmq. With `announcesEachCommand`, the loop prepares and announces each
/// command's events right after that command's reply, in position order (the feed leaves
/// with the replies instead of after the whole batch's); otherwise once per batch, after
/// every reply.
///
/// On SQLite the worker is the log's only writer and publishes the feed itself
/// (`FeedPublisher`); on PostgreSQL several workers share the log, the feed processes
/// publish it in position order, and a worker only hints them that it committed
/// (`CommitHints`).
protocol CommitAnnouncer: ~Copyable {
    /// What `prepare` hands to `announce`.
    associatedtype Announcement

    /// Prepares the announcement of `events` (committed, new, in position order);
    /// `envelopes` holds each one's envelope bytes by position (`EnvelopeWriter`), when it
    /// could be written.
    mutating func prepare(_ events: [RecordedEvent], envelopes: [Int64: [UInt8]]) -> Announcement

    /// Sends what `prepare` made; returns how many feed messages it sent (for `Status`).
    func announce(_ announcement: Announcement) throws(ZMQError) -> Int

    /// The process's allow-list was reloaded (CURVE): a socket whose peers libzmq never
    /// checks again is bound anew. Returns whether it did anything.
    mutating func allowListReloaded() throws(ZMQError) -> Bool

    /// The worker is stopping: its sockets keep sending what they hold for up to
    /// `milliseconds` after they are closed.
    func finish(lingering milliseconds: Int) throws(ZMQError)

    /// False while a socket it needs is not bound (a re-bind failed); the command loop then
    /// calls `allowListReloaded()` again after a while.
    var isReady: Bool { get }

    /// Whether each command's events are announced after its own reply (a feed), rather
    /// than the batch's once after all of them (a hint that the head moved).
    static var announcesEachCommand: Bool { get }
}

extension FeedPublisher: CommitAnnouncer {
    mutating func prepare(_ events: [RecordedEvent], envelopes: [Int64: [UInt8]]) -> [[[UInt8]]] {
        messages(for: events, envelopes: envelopes)
    }

    func announce(_ messages: [[[UInt8]]]) throws(ZMQError) -> Int {
        try publish(messages)
    }

    /// Binds the feed anew, so every subscriber goes through the handshake again.
    mutating func allowListReloaded() throws(ZMQError) -> Bool {
        try rebind()
        return true
    }

    var isReady: Bool { isBound }

    static var announcesEachCommand: Bool { true }

    func finish(lingering milliseconds: Int) throws(ZMQError) {
        try linger(milliseconds)
    }
}
