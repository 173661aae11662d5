import LogbookApplication
import LogbookZMQ

/// What the command loop does with a batch's new events once they are committed, in two
/// steps around the replies: `prepare` before any reply is sent (so whatever it records,
/// such as the feed's per-topic marks, moves past the events even if a reply then fails),
/// `announce` after the replies (a client never hears of an event later than its reply).
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

    func finish(lingering milliseconds: Int) throws(ZMQError) {
        try linger(milliseconds)
    }
}
