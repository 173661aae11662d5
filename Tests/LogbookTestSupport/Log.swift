public import LogbookApplication
public import LogbookDomain

/// A log built in memory from domain events, encoded by the real `EventCodec`, with
/// positions, stream versions and recording times as the event store would assign them.
public struct Log {
    /// 2025-11-24T16:00:00.000Z; each event is recorded one second after the previous one.
    public static let start: Int64 = 1_764_000_000_000

    public private(set) var all: [RecordedEvent] = []
    public private(set) var head: Int64 = 0
    private var versions: [String: Int] = [:]
    public private(set) var clock = Log.start

    public init() {}

    /// Records `event` at the next position, one second later than the previous one.
    @discardableResult
    public mutating func record(_ event: DomainEvent) -> RecordedEvent {
        let stream = event.stream.name
        return record(type: event.typeName, stream: stream, data: EventCodec.encodedText(event))
    }

    /// Records raw text, for events the codec would never write.
    @discardableResult
    public mutating func record(type: String, stream: String, data: String) -> RecordedEvent {
        head += 1
        clock += 1_000
        versions[stream, default: 0] += 1
        let event = RecordedEvent(
            position: head, eventId: "e\(head)", stream: stream, version: versions[stream]!, type: type, data: data,
            metadata: EventMetadata(commandId: "c\(head)", correlationId: "c\(head)", causationId: "c\(head)"),
            recordedAt: clock)
        all.append(event)
        return event
    }

    /// Moves the head past `count` positions whose events this log does not show (another
    /// category a subscriber did not ask for, say).
    public mutating func skipPositions(_ count: Int64) {
        head += count
    }

    public func events(after position: Int64) -> [RecordedEvent] { all.filter { $0.position > position } }

    /// The recording time of the event at `position`, as views show it.
    public func time(of position: Int64) -> Timestamp {
        Timestamp(millisecondsSinceEpoch: all.first { $0.position == position }!.recordedAt)
    }
}
