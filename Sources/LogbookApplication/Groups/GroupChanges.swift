/// What one or more turns of the groups process changed, written by the group store in one
/// transaction, durable when `commit` returns. An acknowledgement is confirmed, and the
/// next event of its stream delivered, only after the changes that record it are committed.
public struct GroupChanges: Sendable, Equatable {
    /// Groups created (none of these names exists in the store).
    public var created: [GroupRecord] = []
    /// Groups deleted, with their outcomes.
    public var deleted: [GroupName] = []
    /// Per group: its new outcomes and checkpoint.
    public var groups: [GroupName: Progress] = [:]

    /// One group's changes. Applied in this order: `outcomes` (each replacing the position's
    /// outcome, if any), then `checkpoint`, which removes every outcome at or before it.
    public struct Progress: Sendable, Equatable {
        /// New outcomes by position, each after the group's checkpoint before this commit.
        public var outcomes: [Int64: EventOutcome] = [:]
        /// The group's new checkpoint, never before its stored one.
        public var checkpoint: Int64?
        /// True when something here must be durable before the turn's replies and deliveries
        /// go out (an acknowledgement, a failure, a retry or skip); a checkpoint that moved
        /// only because the log did may wait for a later commit.
        public var isUrgent = false

        public init() {}

        public var isEmpty: Bool { outcomes.isEmpty && checkpoint == nil }

        /// These changes followed by `later`'s.
        public mutating func merge(_ later: Progress) {
            outcomes.merge(later.outcomes) { _, newer in newer }
            checkpoint = later.checkpoint ?? checkpoint
            isUrgent = isUrgent || later.isUrgent
            if let checkpoint { outcomes = outcomes.filter { $0.key > checkpoint } }
        }
    }

    public init() {}

    public var isEmpty: Bool { created.isEmpty && deleted.isEmpty && groups.values.allSatisfy(\.isEmpty) }
}
