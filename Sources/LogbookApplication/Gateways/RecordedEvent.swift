/// An event as the log holds it.
public struct RecordedEvent: Sendable, Equatable {
    public var position: Int64
    public var eventId: String
    public var stream: String
    public var version: Int
    public var type: String
    public var data: String
    public var metadata: EventMetadata
    /// Milliseconds since the Unix epoch, UTC.
    public var recordedAt: Int64

    public init(
        position: Int64, eventId: String, stream: String, version: Int, type: String, data: String,
        metadata: EventMetadata, recordedAt: Int64
    ) {
        self.position = position
        self.eventId = eventId
        self.stream = stream
        self.version = version
        self.type = type
        self.data = data
        self.metadata = metadata
        self.recordedAt = recordedAt
    }

    /// The part of the stream name before the first `-`.
    public var category: String { Self.category(ofStream: stream) }

    public static func category(ofStream stream: String) -> String {
        stream.firstIndex(of: "-").map { String(stream[..<$0]) } ?? stream
    }
}
