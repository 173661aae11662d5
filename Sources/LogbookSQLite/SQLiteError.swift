import CSQLite

/// A failed SQLite call: the primary result code and SQLite's own message.
struct SQLiteError: Error, CustomStringConvertible {
    let code: Int32
    let message: String

    var description: String { "\(message) (SQLite code \(code))" }

    /// Busy, locked, full disk or I/O trouble: worth retrying later.
    var isTransient: Bool {
        [SQLITE_BUSY, SQLITE_LOCKED, SQLITE_FULL, SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_READONLY].contains(code & 0xFF)
    }

    /// Another connection holds a lock this one needs.
    var isBusy: Bool { [SQLITE_BUSY, SQLITE_LOCKED].contains(code & 0xFF) }

    /// The file is not a database, or is damaged.
    var isCorruption: Bool { [SQLITE_NOTADB, SQLITE_CORRUPT].contains(code & 0xFF) }
}
