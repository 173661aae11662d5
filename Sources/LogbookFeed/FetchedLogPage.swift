public import LogbookApplication
public import LogbookWire

/// A page of the log as `LogReadChannel.readEncoded` gives it: one batch of events to apply
/// (`ReadModelStore.apply`), whatever form the reply came in. A reply in the worker's exact
/// form is kept as its bytes (`EncodedLogPage`), which the store reads without decoding and
/// whose storage can take the next reply (`reusableBytes()`); any other is decoded.
public struct FetchedLogPage: EventBatch {
    private enum Form: Sendable {
        case encoded(EncodedLogPage)
        case decoded(LogPage)
    }

    private var form: Form

    /// A page kept as the bytes it came in.
    public init(_ page: EncodedLogPage) { form = .encoded(page) }

    /// A page decoded from a reply in another form.
    public init(_ page: LogPage) { form = .decoded(page) }

    /// The page as the bytes it came in; nil for a page that was decoded.
    public var encoded: EncodedLogPage? {
        guard case .encoded(let page) = form else { return nil }
        return page
    }

    /// Where the next read starts.
    public var next: Int64 {
        switch form {
        case .encoded(let page): page.next
        case .decoded(let page): page.next
        }
    }

    /// The log's last position when the read began.
    public var head: Int64 {
        switch form {
        case .encoded(let page): page.head
        case .decoded(let page): page.head
        }
    }

    /// How many events the page holds.
    public var count: Int {
        switch form {
        case .encoded(let page): page.events.count
        case .decoded(let page): page.events.count
        }
    }

    public func position(at index: Int) -> Int64 {
        switch form {
        case .encoded(let page): page.events[index].position
        case .decoded(let page): page.events[index].position
        }
    }

    public func readModelChanges(_ indices: Range<Int>) throws(ReadModelStoreError) -> [ReadModelChange] {
        switch form {
        case .encoded(let page): try page.readModelChanges(indices)
        case .decoded(let page): try page.events.readModelChanges(indices)
        }
    }

    /// Every event, decoded; nil when one of them cannot be.
    public func recordedEvents() -> [RecordedEvent]? {
        switch form {
        case .encoded(let page): page.recordedEvents()
        case .decoded(let page): page.events
        }
    }

    /// The storage of the bytes the page came in, for the next reply to be received into;
    /// nil for a page that was decoded.
    public consuming func reusableBytes() -> [UInt8]? {
        guard case .encoded(let page) = form else { return nil }
        return page.bytes
    }

    /// About how many bytes the page holds: its reply's bytes, or for a decoded page its
    /// events' payloads and `LogReader.envelopeOverhead` an event for the rest of each envelope.
    public var byteCount: Int {
        switch form {
        case .encoded(let page): page.bytes.count
        case .decoded(let page): page.events.reduce(0) { $0 + $1.data.utf8.count + LogReader.envelopeOverhead }
        }
    }

    /// How many of the page's events belong to a feed topic (the others are of internal
    /// categories, such as e-mail claims, which no read model folds).
    public var topicalCount: Int {
        switch form {
        case .encoded(let page):
            page.events.count { event in
                page.withFields(of: event) { stream, _, _ in FeedTopic(streamUTF8: stream) != nil }
            }
        case .decoded(let page): page.events.count { FeedTopic(category: $0.category) != nil }
        }
    }

    /// The position of the page's first and last events, if any.
    public var positions: (first: Int64, last: Int64)? {
        count == 0 ? nil : (position(at: 0), position(at: count - 1))
    }

    /// The position through which nothing is missing once the page is applied after
    /// `cursor`: its last event, or the position before `next` (a page may end in events of
    /// topics not asked for), whichever is later, and never before `cursor`.
    public func through(after cursor: Int64) -> Int64 {
        max(cursor, next - 1, positions?.last ?? 0)
    }

    /// The page read after `cursor` (what its reader has applied through), to apply next:
    /// without its events at or below `cursor` (pages follow one another, so normally there
    /// are none and the page is itself), and `through(after: cursor)`.
    public func following(_ cursor: Int64) -> (page: FetchedLogPage, through: Int64) {
        let fresh = (positions?.first ?? .max) > cursor
        return (fresh ? self : dropping(through: cursor), through(after: cursor))
    }

    /// The page without its events at or below `position`.
    public func dropping(through position: Int64) -> FetchedLogPage {
        switch form {
        case .encoded(let page): return FetchedLogPage(page.dropping(through: position))
        case .decoded(var page):
            page.events.removeAll { $0.position <= position }
            return FetchedLogPage(page)
        }
    }
}
