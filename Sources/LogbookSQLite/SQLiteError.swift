import CSQLite
import LogbookApplication

/// A failed SQLite call: the primary result code and SQLite's own message.
struct SQLiteError: Error, CustomStringConvertible {
    let code: Int32
    let message: String

    var description: String { "\(message) (SQLite code \(code))" }

    /// Busy, locked, full disk or I/O trouble: worth retrying later.
    var isTransient: Bool {
        [SQLITE_BUSY, SQLITE_LOCKED, SQLITE_FULL, SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_READONLY].contains(code & 0xFF)
    }

    /// What a client is told of a transient failure.
    var cause: StorageCause {
        switch code & 0xFF {
        case SQLITE_FULL: .diskFull
        case SQLITE_BUSY, SQLITE_LOCKED: .busy
        case SQLITE_IOERR: .ioError
        case SQLITE_READONLY: .readOnly
        case SQLITE_CANTOPEN: .cannotOpen
        default: .unknown
        }
    }

    /// Another connection holds a lock this one needs.
    var isBusy: Bool { [SQLITE_BUSY, SQLITE_LOCKED].contains(code & 0xFF) }

    /// The file is not a database, or is damaged.
    var isCorruption: Bool { [SQLITE_NOTADB, SQLITE_CORRUPT].contains(code & 0xFF) }
}
