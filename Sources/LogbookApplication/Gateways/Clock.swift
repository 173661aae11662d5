public import LogbookDomain

/// Tells the time. The composition root passes the system clock; tests pass a fixed one.
public protocol Clock: Sendable {
    func now() -> Timestamp
}

/// Makes event identifiers (UUIDs in production, counters in tests).
public protocol IDGenerator: Sendable {
    func newEventId() -> String
}
