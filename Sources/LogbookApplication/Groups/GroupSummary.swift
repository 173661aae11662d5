/// What `groups show` tells about a group: its record, its members and what it holds now,
/// and its counters since the groups process started.
public struct GroupSummary: Sendable, Equatable {
    public let record: GroupRecord
    public let members: Int
    public let inFlight: Int
    public let pending: Int
    public let parked: Int
    public let counters: GroupCounters
}
