/// Why a read-model store refused or failed a call. When `apply` throws, nothing of the
/// batch was written and the checkpoint did not move.
public enum ReadModelStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An event at or below the checkpoint: it was applied before and must not be applied twice.
    case alreadyApplied(position: Int64, checkpoint: Int64)
    /// Positions in a batch must strictly increase; this one came after `previous`.
    case outOfOrder(position: Int64, previous: Int64)
    /// An event beyond the position the batch is applied through.
    case beyondTarget(position: Int64, through: Int64)
    /// The checkpoint would move back (`through` below the current checkpoint).
    case checkpointWouldMoveBack(through: Int64, checkpoint: Int64)
    /// The event at `position` cannot be read back into the domain (a damaged or foreign log).
    case unreadableEvent(position: Int64, reason: String)
    /// The file exists but is not a Logbook read-model store (an event log, another
    /// program's database, not a database, or an empty file a reader cannot use).
    case notAReadModel(path: String, reason: String)
    /// The store was written by a newer Logbook.
    case unsupportedSchema(found: Int, supported: Int)
    /// The storage or a row in it is damaged.
    case corrupt(String)
    /// The storage cannot be used right now (busy, locked, disk full, I/O error, missing file).
    /// The message is for the process log (it may name a path); `cause` is what a client is told.
    case unavailable(String, cause: StorageCause = .unknown)
    /// The storage refused or failed in a way that points to a bug, not to the disk.
    case failed(String)

    public var description: String {
        switch self {
        case .alreadyApplied(let position, let checkpoint):
            "position \(position) is at or below the read model's checkpoint \(checkpoint): it was applied already"
        case .outOfOrder(let position, let previous):
            "position \(position) follows position \(previous): a batch must be in increasing position order"
        case .beyondTarget(let position, let through):
            "position \(position) lies beyond the position \(through) the batch is applied through"
        case .checkpointWouldMoveBack(let through, let checkpoint):
            "cannot move the read model's checkpoint back from \(checkpoint) to \(through)"
        case .unreadableEvent(let position, let reason): "the event at position \(position) is unreadable: \(reason)"
        case .notAReadModel(let path, let reason): "\(path) is not a Logbook read-model store: \(reason)"
        case .unsupportedSchema(let found, let supported):
            "the read-model store has schema version \(found); this build reads up to \(supported)"
        case .corrupt(let message): "the read-model store is corrupt: \(message)"
        case .unavailable(let message, _): "the read-model store is unavailable: \(message)"
        case .failed(let message): "the read-model store failed: \(message)"
        }
    }
}
