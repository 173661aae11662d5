public import LogbookApplication
import LogbookJSON

/// A page of the log kept as the bytes it arrived in (a `ReadLog` reply), with each event's
/// envelope located but not decoded. As an `EventBatch` it gives its row changes straight
/// from these bytes, without a `RecordedEvent` or a `String` per field; only an event the
/// fast path does not read is decoded, on its own (`recordedEvent(_:)`).
///
/// It promises that every field it locates lies inside `bytes` (the initializer refuses
/// anything else). Whoever makes one promises more, as `LogPageReader.encodedPage` checks it:
/// each string offset is the opening quote of a canonical JSON string, `data` is a canonical
/// JSON object, positions and versions are at least 1. A string that breaks that promise
/// makes `recordedEvent(_:)` answer nil; nothing here reads outside `bytes`.
public struct EncodedLogPage: EventBatch {
    /// Where one event's envelope fields lie in the page's bytes (offsets into `bytes`).
    public struct Event: Sendable, Equatable {
        public var position: Int64
        public var version: Int
        /// Milliseconds since the Unix epoch, UTC.
        public var recordedAt: Int64
        /// The stream's and the type's text as written, between their quotes (escapes, if
        /// any, not undone: the fast path only matches text that has none).
        public var stream: Range<Int32>
        public var type: Range<Int32>
        /// The payload, a canonical JSON object.
        public var data: Range<Int32>
        /// The opening quotes of the envelope's other strings.
        public var eventId: Int32
        public var commandId: Int32
        public var correlationId: Int32
        public var causationId: Int32

        public init(
            position: Int64, version: Int, recordedAt: Int64, stream: Range<Int32>, type: Range<Int32>,
            data: Range<Int32>, eventId: Int32, commandId: Int32, correlationId: Int32, causationId: Int32
        ) {
            self.position = position
            self.version = version
            self.recordedAt = recordedAt
            self.stream = stream
            self.type = type
            self.data = data
            self.eventId = eventId
            self.commandId = commandId
            self.correlationId = correlationId
            self.causationId = causationId
        }

        /// True when every field lies inside `count` bytes (a string's quotes included).
        func fits(in count: Int) -> Bool {
            let count = Int64(count)
            func inside(_ range: Range<Int32>) -> Bool { range.lowerBound >= 1 && Int64(range.upperBound) < count }
            func quote(_ offset: Int32) -> Bool { offset >= 0 && Int64(offset) < count }
            return inside(stream) && inside(type) && data.lowerBound >= 0 && Int64(data.upperBound) <= count
                && quote(eventId) && quote(commandId) && quote(correlationId) && quote(causationId)
        }
    }

    public let bytes: [UInt8]
    /// The events, in position order.
    public private(set) var events: [Event]
    /// As in `LogPage`: where the next read starts, and the log's last position.
    public var next: Int64
    public var head: Int64

    /// Nil when a field of an event lies outside `bytes`.
    public init?(bytes: [UInt8], events: [Event], next: Int64, head: Int64) {
        guard events.allSatisfy({ $0.fits(in: bytes.count) }) else { return nil }
        self.bytes = bytes
        self.events = events
        self.next = next
        self.head = head
    }

    /// The position of the last event, if any.
    public var lastPosition: Int64? { events.last?.position }

    /// The page without its events at or below `position` (the bytes are shared, not copied).
    public func dropping(through position: Int64) -> EncodedLogPage {
        var page = self
        page.events.removeAll { $0.position <= position }
        return page
    }

    /// The whole event, decoded (for the general path); nil when one of its strings is not
    /// a canonical JSON string.
    public func recordedEvent(_ event: Event) -> RecordedEvent? {
        bytes.withUnsafeBufferPointer { bytes in
            func text(_ quote: Int32) -> String? { JSONCanonicalForm.string(in: bytes, from: Int(quote))?.text }
            guard let eventId = text(event.eventId), let stream = text(event.stream.lowerBound - 1),
                let type = text(event.type.lowerBound - 1), let commandId = text(event.commandId),
                let correlationId = text(event.correlationId), let causationId = text(event.causationId)
            else { return nil }
            let data = String(decoding: Self.view(bytes, event.data), as: UTF8.self)
            return RecordedEvent(
                position: event.position, eventId: eventId, stream: stream, version: event.version, type: type,
                data: data,
                metadata: EventMetadata(commandId: commandId, correlationId: correlationId, causationId: causationId),
                recordedAt: event.recordedAt)
        }
    }

    /// The event's stream name, and its envelope as it lies in the page: `EnvelopeWriter`'s
    /// layout, the bytes `EnvelopeWriter.bytes` writes of `recordedEvent(_:)`, copied without
    /// decoding the event. Nil when the bytes do not hold them where `event` says.
    public func envelope(of event: Event) -> (stream: String, bytes: [UInt8])? {
        bytes.withUnsafeBufferPointer { bytes in
            let start = Int(event.eventId) - Self.envelopeOpening.count
            guard start >= 0, let stream = JSONCanonicalForm.string(in: bytes, from: Int(event.stream.lowerBound - 1)),
                let causationEnd = JSONCanonicalForm.stringEnd(in: bytes, from: Int(event.causationId)),
                let timeEnd = JSONCanonicalForm.stringEnd(
                    in: bytes, from: causationEnd + Self.recordedAtOpening.count),
                timeEnd < bytes.count, bytes[timeEnd] == UInt8(ascii: "}")
            else { return nil }
            return (stream.text, Array(bytes[start...timeEnd]))
        }
    }

    /// What an envelope holds before its event id, and between its causation id and its time.
    private static let envelopeOpening = Array(#"{"eventId":"#.utf8)
    private static let recordedAtOpening = Array(#"},"recordedAt":"#.utf8)

    /// Every event, decoded; nil when one of them cannot be.
    public func recordedEvents() -> [RecordedEvent]? {
        var decoded: [RecordedEvent] = []
        decoded.reserveCapacity(events.count)
        for event in events {
            guard let recorded = recordedEvent(event) else { return nil }
            decoded.append(recorded)
        }
        return decoded
    }

    /// How many events the page holds.
    public var count: Int { events.count }

    public func position(at index: Int) -> Int64 { events[index].position }

    /// The changes read from the page's bytes (`Projector.change(position:recordedAt:...)`).
    public func readModelChanges(_ indices: Range<Int>) throws(ReadModelStoreError) -> [ReadModelChange] {
        var changes: [ReadModelChange] = []
        changes.reserveCapacity(indices.count)
        try bytes.withUnsafeBufferPointer { (bytes) throws(ReadModelStoreError) in
            for event in events[indices] {
                let change = try Projector.change(
                    position: event.position, recordedAt: event.recordedAt, stream: Self.view(bytes, event.stream),
                    type: Self.view(bytes, event.type), data: Self.view(bytes, event.data),
                    decoded: { recordedEvent(event) })
                if let change { changes.append(change) }
            }
        }
        return changes
    }

    /// Calls `body` with the bytes of `event`'s stream name and type (as written, between
    /// their quotes) and of its payload.
    public func withFields<Result>(
        of event: Event,
        _ body: (
            _ stream: UnsafeBufferPointer<UInt8>, _ type: UnsafeBufferPointer<UInt8>, _ data: UnsafeBufferPointer<UInt8>
        ) -> Result
    ) -> Result {
        bytes.withUnsafeBufferPointer { bytes in
            body(Self.view(bytes, event.stream), Self.view(bytes, event.type), Self.view(bytes, event.data))
        }
    }

    /// The bytes of `range` (which `init` checked lie inside `bytes`).
    static func view(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int32>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: bytes[Int(range.lowerBound)..<Int(range.upperBound)])
    }
}
