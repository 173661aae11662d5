public import LogbookApplication

/// Consumer groups held in memory, for unit tests of the layers above: a `GroupStore`
/// with the same promises as the SQLite and PostgreSQL stores except durability. Like
/// theirs, a commit is all or nothing: it is applied to a copy of the groups, in the
/// documented order, and the copy is kept only when every change was valid. A change
/// that points to a bug (a group that is not there, an outcome at or before its group's
/// checkpoint, a checkpoint moved back, a category that is empty or holds a comma) is
/// `.failed`; creating a name that exists is `.groupExists`. Used by one thread at a time,
/// as every group store is.
public final class InMemoryGroupStore: GroupStore {
    private var state = State()

    public init() {}

    public func groups() throws(GroupStoreError) -> [GroupRecord] {
        state.records.values.sorted { $0.name < $1.name }
    }

    public func outcomes(of group: GroupName, after: Int64, limit: Int) throws(GroupStoreError) -> [EventOutcome] {
        guard limit > 0, let outcomes = state.outcomes[group] else { return [] }
        return Array(outcomes.values.filter { $0.position > after }.sorted { $0.position < $1.position }.prefix(limit))
    }

    public func commit(_ changes: GroupChanges) throws(GroupStoreError) {
        var next = state
        try next.apply(changes)
        state = next
    }

    /// Every group and its outcomes by position.
    private struct State {
        var records: [GroupName: GroupRecord] = [:]
        var outcomes: [GroupName: [Int64: EventOutcome]] = [:]

        /// Applies `changes` in the order the stores share: deleted groups, created groups,
        /// then each group's outcomes and its checkpoint. Throws at the first change that
        /// cannot be made.
        mutating func apply(_ changes: GroupChanges) throws(GroupStoreError) {
            for name in changes.deleted {
                guard records.removeValue(forKey: name) != nil else { throw Self.noGroup(name) }
                outcomes.removeValue(forKey: name)
            }
            for record in changes.created {
                guard records[record.name] == nil else { throw .groupExists(record.name) }
                if let category = record.categories.first(where: { $0.isEmpty || $0.contains(",") }) {
                    throw .failed("group \(record.name): the category \"\(category)\" is empty or holds a comma")
                }
                records[record.name] = record
                outcomes[record.name] = [:]
            }
            for (name, progress) in changes.groups.sorted(by: { $0.key < $1.key }) {
                guard var record = records[name], var known = outcomes[name] else { throw Self.noGroup(name) }
                if let early = progress.outcomes.keys.min(), early <= record.checkpoint {
                    throw .failed(
                        "group \(name): position \(early) is at or before its checkpoint \(record.checkpoint)")
                }
                if let checkpoint = progress.checkpoint, checkpoint < record.checkpoint {
                    throw .failed(
                        "group \(name): the checkpoint cannot move back from \(record.checkpoint) to \(checkpoint)")
                }
                for (position, outcome) in progress.outcomes {
                    known[position] = EventOutcome(
                        position: position, isDone: outcome.isDone, attempts: outcome.attempts,
                        parked: outcome.parked, lastFailure: outcome.lastFailure)
                }
                if let checkpoint = progress.checkpoint {
                    record.checkpoint = checkpoint
                    known = known.filter { $0.key > checkpoint }
                }
                records[name] = record
                outcomes[name] = known
            }
        }

        static func noGroup(_ name: GroupName) -> GroupStoreError {
            .failed("there is no group named \(name)")
        }
    }
}
