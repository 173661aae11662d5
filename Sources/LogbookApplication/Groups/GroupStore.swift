/// Where the groups process keeps every group's definition and durable progress (a SQLite
/// file of its own, or PostgreSQL tables): per group its checkpoint and the outcomes of
/// events after it (`EventOutcome`), never the events themselves, which stay in the log.
/// One groups process writes a store at a time.
public protocol GroupStore: AnyObject {
    /// Every group, by name.
    func groups() throws(GroupStoreError) -> [GroupRecord]

    /// Up to `limit` outcomes of `group`'s events after position `after`, in position order.
    func outcomes(of group: GroupName, after: Int64, limit: Int) throws(GroupStoreError) -> [EventOutcome]

    /// Writes `changes` in one transaction, durable when this returns; on a throw nothing
    /// of them was written. Creating a group whose name exists is `.groupExists`.
    func commit(_ changes: GroupChanges) throws(GroupStoreError)
}

/// Why the group store could not do what was asked.
public enum GroupStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A group of that name exists already.
    case groupExists(GroupName)
    /// The file is not a Logbook group store, or was written by a newer Logbook.
    case notAGroupStore(String)
    /// The storage cannot be used right now (busy, disk full, I/O error); retrying may work.
    case unavailable(String)
    /// The storage refused a write in a way that points to a bug (a broken constraint).
    case failed(String)

    public var description: String {
        switch self {
        case .groupExists(let name): "a group named \(name) exists already"
        case .notAGroupStore(let reason): "not a Logbook group store: \(reason)"
        case .unavailable(let reason): "the group store is unavailable: \(reason)"
        case .failed(let reason): "the group store failed: \(reason)"
        }
    }
}
