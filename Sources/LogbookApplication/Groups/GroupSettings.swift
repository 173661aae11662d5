import LogbookDomain

/// How a consumer group delivers: how long a delivery may go unacknowledged, how many
/// times an event is delivered before it is parked, and how many deliveries one member
/// holds at most. Every value is checked against its range when a group is created.
public struct GroupSettings: Hashable, Sendable {
    public static let ackWaitRange: ClosedRange<Int> = 100...86_400_000
    public static let maxDeliverRange: ClosedRange<Int> = 1...1_000
    public static let maxInFlightRange: ClosedRange<Int> = 1...10_000

    /// Milliseconds a delivery may go unacknowledged before it is delivered again.
    public let ackWaitMilliseconds: Int
    /// Deliveries of one event before it is parked.
    public let maxDeliver: Int
    /// Deliveries one member holds unacknowledged at most.
    public let maxInFlight: Int

    public static let defaults = GroupSettings(checked: 30_000, maxDeliver: 5, maxInFlight: 64)

    /// Settings from a request: each nil takes its default; a value out of range is
    /// `invalid_input` naming the wire field (`ackWaitMs`, `maxDeliver`, `maxInFlight`).
    public init(ackWaitMilliseconds: Int?, maxDeliver: Int?, maxInFlight: Int?) throws(ServiceError) {
        let ackWait = ackWaitMilliseconds ?? Self.defaults.ackWaitMilliseconds
        let deliver = maxDeliver ?? Self.defaults.maxDeliver
        let inFlight = maxInFlight ?? Self.defaults.maxInFlight
        try Self.check(ackWait, Self.ackWaitRange, "ackWaitMs")
        try Self.check(deliver, Self.maxDeliverRange, "maxDeliver")
        try Self.check(inFlight, Self.maxInFlightRange, "maxInFlight")
        self.init(checked: ackWait, maxDeliver: deliver, maxInFlight: inFlight)
    }

    /// Settings read back from the group store, which only ever holds checked ones.
    public init(checked ackWaitMilliseconds: Int, maxDeliver: Int, maxInFlight: Int) {
        self.ackWaitMilliseconds = ackWaitMilliseconds
        self.maxDeliver = maxDeliver
        self.maxInFlight = maxInFlight
    }

    private static func check(_ value: Int, _ range: ClosedRange<Int>, _ field: String) throws(ServiceError) {
        guard range.contains(value) else {
            throw ServiceError(
                .invalidInput, "\(field) must be from \(range.lowerBound) to \(range.upperBound), got \(value)",
                details: [("field", .string(field))])
        }
    }
}
