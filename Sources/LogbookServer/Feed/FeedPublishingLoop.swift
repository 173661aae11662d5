import LogbookApplication
import LogbookWire
import LogbookZMQ

/// A feed process's publishing loop, on its own thread: owns the feed PUB (through
/// `FeedPublisher`), the hints SUB and a connection to the log. It keeps a cursor (every
/// event up to it is published; it starts at the log's head, like a worker's marks) and,
/// on each hint or after `FeedPacing`'s wait, reads the log from cursor + 1 page by page
/// in position order and publishes exactly the messages a SQLite worker publishes for
/// those events (`EnvelopeWriter`, `FeedPublisher`), so subscribers cannot tell the two apart.
///
/// Reading `position > cursor` in order never skips an event, even from a streaming
/// replica: the primary assigns positions under the head row's lock and commits them in
/// position order (see `PostgresEventStore`), and a replica replays commits in commit
/// order, so every snapshot of either shows a prefix 1 … H of the log. An event the read
/// does not return yet is after every event it does return, and the next read starts there.
///
/// When the log cannot be read the cursor stays where it is and the loop retries with a
/// bounded back-off, saying so once at `warning` and again at `info` when it follows again.
///
/// With CURVE on, a hint counts only from a key still listed with a role that may hint, and
/// after each reload of the allow-list the feed is bound anew (as in a worker).
struct FeedPublishingLoop: ServingLoop, ~Copyable {
    var publisher: FeedPublisher
    let hints: ZMQSocket
    let store: any EventStore
    let diagnostics: Diagnostics
    let pageSize: Int
    let requestGuard: RequestGuard
    /// Readable after each reload of the allow-list (nil with security off).
    let reloads: WakeUpPipe?
    /// Checked in on every turn, for the supervisor's watchdog.
    let heartbeat: Heartbeat
    private(set) var cursor: Int64
    private var pacing: FeedPacing
    let metrics: FeedMetrics

    init(
        publisher: consuming FeedPublisher, hints: consuming ZMQSocket, store: any EventStore, cursor: Int64,
        pollMilliseconds: Int, pageSize: Int, diagnostics: Diagnostics, security: ServerSecurity? = nil,
        reloads: WakeUpPipe? = nil, heartbeat: Heartbeat = Heartbeat(), metrics: FeedMetrics
    ) {
        self.heartbeat = heartbeat
        self.metrics = metrics
        metrics.recordPage(messages: 0, through: cursor)
        requestGuard = RequestGuard(security: security)
        self.reloads = reloads
        self.publisher = publisher
        self.hints = hints
        self.store = store
        self.cursor = cursor
        self.pageSize = max(1, pageSize)
        self.diagnostics = diagnostics
        pacing = FeedPacing(pollMilliseconds: pollMilliseconds)
    }

    /// Serves until the context is shut down.
    mutating func run() {
        while true {
            do {
                var items = [hints.readable]
                if let reloads { items.append(reloads.readable) }
                let wait =
                    publisher.isBound ? pacing.nextWaitMilliseconds : FeedPublisher.rebindRetryMilliseconds
                let ready = try ZMQPoll.wait(items, timeoutMilliseconds: heartbeat.pollTimeout(wait))
                heartbeat.beat()
                if let reloads, ready[1] || !publisher.isBound {
                    reloads.drain()
                    rebindFeed()
                }
                if ready[0] { try takeHints() }
                try publishNewEvents()
            } catch {
                if error.isTerminated { return }
                // A socket error other than shutdown concerns one message; keep serving.
                diagnostics.error("feed loop: socket error", ["error": error.description])
            }
        }
    }

    /// Binds the feed anew after a reload, so every subscriber is admitted again or refused.
    private mutating func rebindFeed() {
        do {
            try publisher.rebind()
            diagnostics.info("feed socket bound anew: subscribers reconnect through the allow-list")
        } catch {
            diagnostics.error("feed socket not bound anew; trying again", ["error": error.description])
        }
    }

    /// Reads every hint waiting (they only say how far the log got).
    private mutating func takeHints() throws(ZMQError) {
        while let message = try hints.receiveMessage(wait: false) {
            guard requestGuard.admit(message.metadata, for: .hint) == .serve else { continue }
            if let position = CommitHint.position(of: message.frames) { pacing.hint(position) }
        }
    }

    /// Publishes every event after the cursor that the log shows now, page by page.
    private mutating func publishNewEvents() throws(ZMQError) {
        while true {
            let events: [RecordedEvent]
            do {
                events = try store.read(fromPosition: cursor + 1, limit: pageSize, categories: nil)
            } catch {
                if pacing.readFailed() {
                    diagnostics.warning(
                        "cannot read the log; retrying with back-off",
                        ["error": error.description, "published": "\(cursor)"])
                }
                return
            }
            try publish(events)
            // A long catch-up (after an outage of the log) is many pages: each one is a turn
            // for the watchdog, so catching up never reads as a wedged loop.
            heartbeat.beat()
            if events.count < pageSize { break }
        }
        if pacing.read(reached: cursor) { diagnostics.info("following the log again", ["published": "\(cursor)"]) }
    }

    /// Publishes one page (in position order, every event after the cursor) and moves the
    /// cursor past it before sending, as a worker moves its marks: a message that then
    /// fails to go out is a hole its subscribers fill from the log.
    private mutating func publish(_ events: [RecordedEvent]) throws(ZMQError) {
        guard let last = events.last else { return }
        var envelopes: [Int64: [UInt8]] = [:]
        for event in events { envelopes[event.position] = try? EnvelopeWriter.bytes(event) }
        let messages = publisher.messages(for: events, envelopes: envelopes)
        cursor = last.position
        let sent = try publisher.publish(messages)
        metrics.recordPage(messages: sent, through: cursor)
    }
}
