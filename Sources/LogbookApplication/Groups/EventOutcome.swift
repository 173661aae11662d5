/// What a group durably knows of one event after its checkpoint: it is done (acknowledged or
/// skipped), or its deliveries failed (how many, whether it is parked, and why the last one
/// failed). The group store keeps no payloads: the event itself is read again from the log
/// when it is needed. An event after the checkpoint with no outcome is not done, and no
/// delivery of it failed that the store knows of.
public struct EventOutcome: Hashable, Sendable {
    public let position: Int64
    /// True once the event is done: it is never delivered again.
    public let isDone: Bool
    /// Deliveries that failed (nacked, unacknowledged within the wait, or held by a member
    /// that left or went silent), for an event that is not done; 0 for a done one.
    public let attempts: Int
    /// True once the event failed `maxDeliver` deliveries: its stream waits for an admin.
    public let parked: Bool
    /// Why its last delivery failed.
    public let lastFailure: String?

    /// The event is done.
    public static func done(_ position: Int64) -> EventOutcome {
        EventOutcome(position: position, isDone: true, attempts: 0, parked: false, lastFailure: nil)
    }

    /// The event's deliveries failed `attempts` times (0 after a retry), parked or not.
    public static func failed(_ position: Int64, attempts: Int, parked: Bool, lastFailure: String?)
        -> EventOutcome
    {
        EventOutcome(position: position, isDone: false, attempts: attempts, parked: parked, lastFailure: lastFailure)
    }

    /// An outcome as the store read it back.
    public init(position: Int64, isDone: Bool, attempts: Int, parked: Bool, lastFailure: String?) {
        self.position = position
        self.isDone = isDone
        self.attempts = isDone ? 0 : attempts
        self.parked = isDone ? false : parked
        self.lastFailure = isDone ? nil : lastFailure
    }
}
