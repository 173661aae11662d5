/// Why the store could not do what was asked. When `append` throws, nothing of the batch was committed.
public enum EventStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file exists but is not a Logbook event log (another program's database, or not a database).
    case notAnEventLog(path: String, reason: String)
    /// The log was written by a newer Logbook.
    case unsupportedSchema(found: Int, supported: Int)
    /// The storage is damaged.
    case corrupt(String)
    /// The event at `position` cannot be brought to its type's current shape: a newer
    /// Logbook wrote it, or its payload does not match the schema version it was stored under.
    case unreadableEvent(position: Int64, reason: String)
    /// The storage cannot be used right now (busy, locked, disk full, I/O error); retrying may
    /// work. The message is for the process log (it may name a path); `cause` is what a client is told.
    case unavailable(String, cause: StorageCause = .unknown)
    /// A request the store refuses (neither events nor an answer, …).
    case invalidRequest(String)
    /// The storage refused or failed a write in a way that points to a bug, not to the disk.
    case failed(String)

    public var description: String {
        switch self {
        case .notAnEventLog(let path, let reason): "\(path) is not a Logbook event log: \(reason)"
        case .unsupportedSchema(let found, let supported):
            "the event log has schema version \(found); this build reads up to \(supported)"
        case .corrupt(let message): "the event log is corrupt: \(message)"
        case .unreadableEvent(let position, let reason): "the event at position \(position) is unreadable: \(reason)"
        case .unavailable(let message, _): "the event log is unavailable: \(message)"
        case .invalidRequest(let message): "invalid append request: \(message)"
        case .failed(let message): "the event log failed: \(message)"
        }
    }
}
