public import LogbookApplication

/// Consumer groups held in memory, for unit tests of the layers above: a `GroupStore`
/// with the same promises as the SQLite and PostgreSQL stores except durability. Like
/// theirs, a commit is all or nothing: it is applied to a copy of the groups, in the
/// documented order, and the copy is kept only when every change was valid. A change
/// that points to a bug (a group that is not there, a pending event inserted twice,
/// updated or removed when it is not pending, a category that is empty or holds a
/// comma) is `.failed`; creating a name that exists is `.groupExists`. Used by one
/// thread at a time, as every group store is.
public final class InMemoryGroupStore: GroupStore {
    private var state = State()

    public init() {}

    public func groups() throws(GroupStoreError) -> [GroupRecord] {
        state.records.values.sorted { $0.name < $1.name }
    }

    public func pending(of group: GroupName, stream: String?, after: Int64, limit: Int) throws(GroupStoreError)
        -> [PendingEvent]
    {
        guard limit > 0, let events = state.pending[group] else { return [] }
        let chosen = events.values.filter { event in
            event.position > after && (stream == nil || event.stream == stream)
        }
        return Array(chosen.sorted { $0.position < $1.position }.prefix(limit))
    }

    public func parkedCount(of group: GroupName) throws(GroupStoreError) -> Int {
        state.pending[group]?.values.reduce(0) { $0 + ($1.parked ? 1 : 0) } ?? 0
    }

    public func commit(_ changes: GroupChanges) throws(GroupStoreError) {
        var next = state
        try next.apply(changes)
        state = next
    }

    /// Every group and its pending events by position.
    private struct State {
        var records: [GroupName: GroupRecord] = [:]
        var pending: [GroupName: [Int64: PendingEvent]] = [:]

        /// Applies `changes` in the order the stores share: deleted groups, created groups,
        /// then each group's inserted, updated and removed events and its checkpoint and
        /// scanned position. Throws at the first change that cannot be made.
        mutating func apply(_ changes: GroupChanges) throws(GroupStoreError) {
            for name in changes.deleted {
                guard records.removeValue(forKey: name) != nil else { throw Self.noGroup(name) }
                pending.removeValue(forKey: name)
            }
            for record in changes.created {
                guard records[record.name] == nil else { throw .groupExists(record.name) }
                if let category = record.categories.first(where: { $0.isEmpty || $0.contains(",") }) {
                    throw .failed("group \(record.name): the category \"\(category)\" is empty or holds a comma")
                }
                records[record.name] = record
                pending[record.name] = [:]
            }
            for (name, progress) in changes.groups.sorted(by: { $0.key < $1.key }) {
                guard var record = records[name], var events = pending[name] else { throw Self.noGroup(name) }
                for event in progress.inserted {
                    guard events[event.position] == nil else {
                        throw .failed("group \(name): position \(event.position) is pending already")
                    }
                    events[event.position] = event
                }
                for (position, event) in progress.updated.sorted(by: { $0.key < $1.key }) {
                    guard let stored = events[position] else { throw Self.notPending(position, name) }
                    events[position] = PendingEvent(
                        position: position, stream: stored.stream, attempts: event.attempts, parked: event.parked,
                        lastFailure: event.lastFailure, payload: stored.payload)
                }
                for position in progress.removed {
                    guard events.removeValue(forKey: position) != nil else { throw Self.notPending(position, name) }
                }
                if let checkpoint = progress.checkpoint { record.checkpoint = checkpoint }
                if let scanned = progress.scanned { record.scanned = scanned }
                records[name] = record
                pending[name] = events
            }
        }

        static func noGroup(_ name: GroupName) -> GroupStoreError {
            .failed("there is no group named \(name)")
        }

        static func notPending(_ position: Int64, _ name: GroupName) -> GroupStoreError {
            .failed("group \(name): position \(position) is not pending")
        }
    }
}
