public import LogbookApplication

/// An accepted command: the position of its last event in the log and its events, as the
/// worker recorded them (a retried command id returns the first outcome).
public struct CommandReceipt: Sendable, Equatable {
    public var position: Int64
    public var events: [RecordedEvent]

    public init(position: Int64, events: [RecordedEvent]) {
        self.position = position
        self.events = events
    }
}
