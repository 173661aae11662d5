public import LogbookApplication
import LogbookWire

/// A `ReadLog` page as `LogReadChannel.readEncoded` gives it: kept as its bytes when the
/// reply was in the worker's exact form, else decoded by the general reader.
public enum FetchedLogPage: Sendable {
    case encoded(EncodedLogPage)
    case decoded(LogPage)

    /// Where the next read starts.
    public var next: Int64 {
        switch self {
        case .encoded(let page): page.next
        case .decoded(let page): page.next
        }
    }

    /// The log's last position when the read began.
    public var head: Int64 {
        switch self {
        case .encoded(let page): page.head
        case .decoded(let page): page.head
        }
    }

    /// How many events the page holds.
    public var count: Int {
        switch self {
        case .encoded(let page): page.events.count
        case .decoded(let page): page.events.count
        }
    }

    /// About how many bytes the page holds: its reply's bytes, or for a decoded page its
    /// events' payloads and `LogReader.envelopeOverhead` an event for the rest of each envelope.
    public var byteCount: Int {
        switch self {
        case .encoded(let page): page.bytes.count
        case .decoded(let page): page.events.reduce(0) { $0 + $1.data.utf8.count + LogReader.envelopeOverhead }
        }
    }

    /// How many of the page's events belong to a feed topic (the others are of internal
    /// categories, such as e-mail claims, which no read model folds).
    public var topicalCount: Int {
        switch self {
        case .encoded(let page):
            page.bytes.withUnsafeBufferPointer { bytes in
                page.events.count { event in
                    let stream = Int(event.stream.lowerBound)..<Int(event.stream.upperBound)
                    return FeedTopic(streamUTF8: UnsafeBufferPointer(rebasing: bytes[stream])) != nil
                }
            }
        case .decoded(let page): page.events.count { FeedTopic(category: $0.category) != nil }
        }
    }

    /// The position of the page's first and last events, if any.
    public var positions: (first: Int64, last: Int64)? {
        switch self {
        case .encoded(let page): page.events.first.map { ($0.position, page.events[page.events.count - 1].position) }
        case .decoded(let page): page.events.first.map { ($0.position, page.events[page.events.count - 1].position) }
        }
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
        switch self {
        case .encoded(let page): return .encoded(page.dropping(through: position))
        case .decoded(var page):
            page.events.removeAll { $0.position <= position }
            return .decoded(page)
        }
    }

    /// Applies the page's events to `store` and moves its checkpoint to `through`.
    public func apply(to store: any ReadModelStore, through position: Int64) throws(ReadModelStoreError) {
        switch self {
        case .encoded(let page): try store.apply(page, through: position)
        case .decoded(let page): try store.apply(page.events, through: position)
        }
    }
}
