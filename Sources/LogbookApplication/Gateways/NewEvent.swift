/// An event about to be appended.
public struct NewEvent: Sendable, Equatable {
    public var eventId: String
    public var stream: String
    public var type: String
    /// The payload, a JSON object as text.
    public var data: String
    public var recordedAt: Int64

    public init(eventId: String, stream: String, type: String, data: String, recordedAt: Int64) {
        self.eventId = eventId
        self.stream = stream
        self.type = type
        self.data = data
        self.recordedAt = recordedAt
    }
}
