/// Makes event identifiers (UUIDs in production, counters in tests).
public protocol IDGenerator: Sendable {
    func newEventId() -> String
}
