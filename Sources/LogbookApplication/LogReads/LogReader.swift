public import LogbookJSON

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
/// never skips an event: the head is read before the events, so a short page means every
/// event of the topics up to that head has been seen.
public struct LogReader {
    private let store: any EventStore

    public init(store: any EventStore) {
        self.store = store
    }

    public func read(_ request: LogReadRequest) throws(ServiceError) -> LogPage {
        do {
            let head = try store.headPosition()
            let events = try store.read(
                fromPosition: request.from, limit: request.limit, categories: request.categories)
            var next = (events.last?.position).map { $0 + 1 } ?? request.from
            if events.count < request.limit { next = max(next, head + 1) }
            return LogPage(events: events, next: next, head: head)
        } catch {
            throw ServiceError(error)
        }
    }

    /// The reply `{"id","ok":true,"events":[…],"next","head"}`.
    public static func reply(id: String, _ page: LogPage) -> JSONValue {
        var envelopes: [JSONValue] = []
        envelopes.reserveCapacity(page.events.count)
        for event in page.events {
            do {
                envelopes.append(try WireEncoding.envelope(event))
            } catch {
                return WireEncoding.failure(id: id, .unreadable(error))
            }
        }
        return WireEncoding.success(
            id: id, ["events": .array(envelopes), "next": .int(Int(page.next)), "head": .int(Int(page.head))])
    }
}
