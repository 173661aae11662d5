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
    static let envelopeOverhead = 300

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

    /// The same reply written straight as bytes: `JSONWriter.bytes(reply(id:page))`, byte for
    /// byte, with each envelope written by `EnvelopeWriter` into one buffer.
    public static func replyBytes(id: String, _ page: LogPage) -> [UInt8] {
        var output: [UInt8] = []
        writeReply(id: id, page, into: &output)
        return output
    }

    /// Replaces the contents of `output` with the reply of `replyBytes`; a caller that
    /// answers many reads keeps one buffer and its capacity.
    public static func writeReply(id: String, _ page: LogPage, into output: inout [UInt8]) {
        output.removeAll(keepingCapacity: true)
        output.reserveCapacity(page.events.reduce(64) { $0 + $1.data.utf8.count + envelopeOverhead })
        output.append(contentsOf: #"{"id":"#.utf8)
        JSONWriter.writeString(id, into: &output)
        output.append(contentsOf: #","ok":true,"events":["#.utf8)
        for (index, event) in page.events.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            do {
                try EnvelopeWriter.write(event, into: &output)
            } catch {
                output.removeAll(keepingCapacity: true)
                JSONWriter.write(WireEncoding.failure(id: id, .unreadable(error)), into: &output)
                return
            }
        }
        output.append(contentsOf: #"],"next":"#.utf8)
        JSONWriter.writeInteger(Int(page.next), into: &output)
        output.append(contentsOf: #","head":"#.utf8)
        JSONWriter.writeInteger(Int(page.head), into: &output)
        output.append(UInt8(ascii: "}"))
    }
}
