/// Identifies a member of a group: the bytes its connection is known by (a ROUTER's
/// routing id). Opaque to the group.
public struct MemberId: Hashable, Sendable {
    public let bytes: [UInt8]

    public init(_ bytes: [UInt8]) { self.bytes = bytes }
}

/// A member of one group as the group sees it: when it was last heard from, how many
/// deliveries it holds and may hold, and the streams that wait for it to have room.
struct GroupMember {
    var lastSeen: Int64
    var inFlight = 0
    /// Deliveries it may hold at once: the group's `maxInFlight`, or fewer if it asked.
    var limit: Int
    var hasRoom: Bool { inFlight < limit }
    /// Ready streams assigned to this member while it had no room, re-offered when it has.
    var waiting: [(position: Int64, stream: String)] = []
}
