/// What one turn of the groups process changed, written by the group store in one
/// transaction, durable when `commit` returns. A delivery is sent, and an acknowledgement
/// confirmed, only after the changes that record it are committed.
public struct GroupChanges: Sendable, Equatable {
    /// Groups created this turn (none of these names exists in the store).
    public var created: [GroupRecord] = []
    /// Groups deleted this turn, with their pending events.
    public var deleted: [GroupName] = []
    /// Per group: what happened to its progress and its pending events.
    public var groups: [GroupName: Progress] = [:]

    /// One group's changes. Applied in this order: `inserted`, `updated`, `removed`, then
    /// `checkpoint` and `scanned`.
    public struct Progress: Sendable, Equatable {
        /// Events taken from the log (none is in the store yet).
        public var inserted: [PendingEvent] = []
        /// New attempts, parking and failure of pending events, by position (the payload is
        /// not rewritten).
        public var updated: [Int64: PendingEvent] = [:]
        /// Pending events that are done (acknowledged or skipped).
        public var removed: [Int64] = []
        public var checkpoint: Int64?
        public var scanned: Int64?

        public init() {}

        public var isEmpty: Bool {
            inserted.isEmpty && updated.isEmpty && removed.isEmpty && checkpoint == nil && scanned == nil
        }
    }

    public init() {}

    public var isEmpty: Bool { created.isEmpty && deleted.isEmpty && groups.values.allSatisfy(\.isEmpty) }
}
