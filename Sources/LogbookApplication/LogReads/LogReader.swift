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

/// The log-read use case behind `ReadLog` (replay and catch-up). It promises that `next`
/// never skips an event: the head is read before the events, so a page that stopped
/// short of `limit` without being cut by the byte budget means every event of the topics
/// up to that head has been seen, and `next` is then past the head. A reader is done
/// when `next > head`.
public struct LogReader {
    private let store: any EventStore

    public init(store: any EventStore) {
        self.store = store
    }

    /// The most payload bytes one page carries (events are never split: a page holds at
    /// least one event). Keeps a page of large events far below the socket's size limit.
    public static let pageByteBudget = 4 << 20

    public func read(_ request: LogReadRequest) throws(ServiceError) -> LogPage {
        do {
            let head = try store.headPosition()
            var events = try store.read(
                fromPosition: request.from, limit: request.limit, categories: request.categories)
            let read = events.count
            var bytes = 0
            if let cut = events.firstIndex(where: { event in
                bytes += event.data.utf8.count + Self.envelopeOverhead
                return bytes > Self.pageByteBudget
            }) {
                events.removeSubrange(max(cut, 1)...)
            }
            var next = (events.last?.position).map { $0 + 1 } ?? request.from
            if read < request.limit && events.count == read { next = max(next, head + 1) }
            return LogPage(events: events, next: next, head: head)
        } catch {
            throw ServiceError(error)
        }
    }

    /// Roughly what an envelope adds to its `data`, for the page budget.
    public static let envelopeOverhead = 300
}
