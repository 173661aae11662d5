/// Why a store could not be used, in words a client may see: never a path, a host or the
/// storage engine's own message (those go to the process log). Stores set it on their
/// `unavailable` errors; `ServiceError` puts `text` in the client's message.
public enum StorageCause: String, Sendable, Equatable, CaseIterable {
    case diskFull
    case busy
    case ioError
    case readOnly
    case cannotOpen
    case databaseServer
    /// No cause the client needs: the message says only that the store is unavailable.
    case unknown

    /// The cause as a client reads it, or nil for `unknown`.
    public var text: String? {
        switch self {
        case .diskFull: "disk full"
        case .busy: "busy: another connection holds a lock"
        case .ioError: "I/O error"
        case .readOnly: "the storage is read-only"
        case .cannotOpen: "the storage cannot be opened"
        case .databaseServer: "the database server cannot be reached or refused the work"
        case .unknown: nil
        }
    }
}
