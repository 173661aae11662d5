/// An event handed to a member: its position, which attempt this is (1 for the first), and
/// the payload to send. Sent only after the attempt is recorded in the group store.
public struct GroupDelivery: Sendable, Equatable {
    public let group: GroupName
    public let member: MemberId
    public let position: Int64
    public let attempt: Int
    public let payload: [UInt8]
}

/// What became of an acknowledgement: the positions it finished, and those the member did
/// not hold (stale: delivered again elsewhere, timed out, or never delivered to it), which
/// changed nothing.
public struct AckOutcome: Sendable, Equatable {
    public init(acked: [Int64] = [], stale: [Int64] = []) {
        self.acked = acked
        self.stale = stale
    }

    public var acked: [Int64] = []
    public var stale: [Int64] = []
}

/// A group's counters since the groups process started.
public struct GroupCounters: Sendable, Equatable {
    /// Deliveries sent, first ones and again.
    public var delivered = 0
    /// Deliveries after the first of an event.
    public var redelivered = 0
    public var acked = 0
    public var nacked = 0
    /// Deliveries that went unacknowledged for the group's wait.
    public var expired = 0
    /// Events parked (after their last allowed delivery failed).
    public var parked = 0
}
