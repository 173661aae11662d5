/// An event a group holds in memory, taken from the log and not yet done: waiting for its
/// turn in its stream, delivered and not acknowledged, or parked. `payload` is what a member
/// receives (the event's envelope, as the wire writes it); the group never reads it.
/// `attempts` counts deliveries made, in this run and the failed ones recorded before.
public struct PendingEvent: Hashable, Sendable {
    public let position: Int64
    public let stream: String
    /// How many times it was delivered.
    public var attempts: Int
    /// True once it failed `maxDeliver` deliveries: its stream waits until an admin retries
    /// or skips it.
    public var parked: Bool
    /// Why its last delivery failed (a member's nack reason, an expired wait, a member gone).
    public var lastFailure: String?
    public let payload: [UInt8]

    public init(
        position: Int64, stream: String, attempts: Int = 0, parked: Bool = false, lastFailure: String? = nil,
        payload: [UInt8]
    ) {
        self.position = position
        self.stream = stream
        self.attempts = attempts
        self.parked = parked
        self.lastFailure = lastFailure
        self.payload = payload
    }

    /// Its durable outcome now: a failed one, with what was recorded of its deliveries.
    var failedOutcome: EventOutcome {
        .failed(position, attempts: attempts, parked: parked, lastFailure: lastFailure)
    }
}
