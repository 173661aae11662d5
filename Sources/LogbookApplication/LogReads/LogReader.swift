/// One page of the log, as a `ReadLog` reply carries it.
public struct LogPage: Sendable, Equatable {
    /// Events in position order.
    public var events: [RecordedEvent]
    /// Where the next read should start: every event of the asked-for topics before it
    /// has been returned by this read or an earlier one.
    public var next: Int64
    /// The log's last position when the read began.
    public var head: Int64

    public init(events: [RecordedEvent], next: Int64, head: Int64) {
        self.events = events
        self.next = next
        self.head = head
    }
}

/// Where a page read event by event ended: how many events it handed out, and its `next`
/// and `head` (as in `LogPage`).
public struct LogPageBounds: Sendable, Equatable {
    public var count: Int
    public var next: Int64
    public var head: Int64

    public init(count: Int, next: Int64, head: Int64) {
        self.count = count
        self.next = next
        self.head = head
    }
}

/// The log-read use case behind `ReadLog` (replay and catch-up). It promises that `next`
/// never skips an event: the head is read before the events, so a page that stopped
/// short of `limit` without being cut by the byte budget means every event of the topics
/// up to that head has been seen, and `next` is then past the head. A reader is done
/// when `next > head`.
public struct LogReader {
    private let store: any EventStore

    /// The most payload bytes (with `envelopeOverhead` each) one page of this reader carries.
    public let byteBudget: Int

    /// A reader whose pages stop at `byteBudget` (tests use a small one).
    public init(store: any EventStore, byteBudget: Int = LogReader.pageByteBudget) {
        self.store = store
        self.byteBudget = byteBudget
    }

    /// The most payload bytes one page carries (events are never split: a page holds at
    /// least one event). Keeps a page of large events far below the socket's size limit.
    public static let pageByteBudget = 4 << 20

    /// The page of at most `limit` events from position `from`, only those of `categories`
    /// when given, its events as `RecordedEvent`s.
    public func read(from: Int64, limit: Int, categories: Set<String>?) throws(ServiceError) -> LogPage {
        var events: [RecordedEvent] = []
        do {
            let bounds = try read(from: from, limit: limit, categories: categories) { event in
                events.append(event.recordedEvent)
            }
            return LogPage(events: events, next: bounds.next, head: bounds.head)
        } catch {
            switch error {
            case .store(let error): throw ServiceError(error)
            case .body(let never): switch never {}
            }
        }
    }

    /// Reads the same page as `read(from:limit:categories:)`, handing each of its events to
    /// `body` in position order as borrowed bytes (a writer of replies copies them straight
    /// into its output, with no `RecordedEvent` or `String` made): at most `limit` events,
    /// cut before the event that takes the page over `byteBudget` (never before the first),
    /// `next` and `head` as documented above. A throw of `body` stops the read and comes out
    /// as `.body`.
    public func read<Failure: Error>(
        from: Int64, limit: Int, categories: Set<String>?, visiting body: (StoredEventBytes) throws(Failure) -> Void
    ) throws(PagedReadError<Failure>) -> LogPageBounds {
        var count = 0
        var bytes = 0
        var last: Int64?
        var cut = false
        var failure: Failure?
        let head: Int64
        do {
            head = try store.headPosition()
            try store.visitEvents(fromPosition: from, limit: limit, categories: categories) {
                event in
                bytes += event.data.count + Self.envelopeOverhead
                if bytes > byteBudget && count > 0 {
                    cut = true
                    return false
                }
                do throws(Failure) {
                    try body(event)
                } catch {
                    failure = error
                    return false
                }
                count += 1
                last = event.position
                return true
            }
        } catch {
            throw .store(error)
        }
        if let failure { throw .body(failure) }
        var next = last.map { $0 + 1 } ?? from
        // Every event of the topics up to the head was seen: the page neither filled nor was cut.
        if count < limit && !cut { next = max(next, head + 1) }
        return LogPageBounds(count: count, next: next, head: head)
    }

    /// The log's last position now.
    public func headPosition() throws(ServiceError) -> Int64 {
        do {
            return try store.headPosition()
        } catch {
            throw ServiceError(error)
        }
    }

    /// Roughly what an envelope adds to its `data`, for the page budget.
    public static let envelopeOverhead = 300
}

extension LogPageBounds {
    /// The page stopped at its `limit` or its byte budget with more of the log after it: its
    /// events do not depend on when it was read (the log only grows past `head`), so the
    /// same read later returns the same events and `next`, with a newer `head`.
    public var stoppedBeforeHead: Bool { next <= head }
}
