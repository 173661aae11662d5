public import LogbookDomain

/// Tells the time. The composition root passes the system clock; tests pass a fixed one.
public protocol Clock: Sendable {
    func now() -> Timestamp
}
