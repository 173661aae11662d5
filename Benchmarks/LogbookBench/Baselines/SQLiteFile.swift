import CSQLite

/// A raw SQLite handle for the baselines, which measure SQLite itself with nothing of
/// Logbook in between. Closed when released.
final class SQLiteFile {
    let handle: OpaquePointer
    let path: String

    init(path: String, readOnly: Bool = false) throws(BenchError) {
        var db: OpaquePointer?
        let flags = readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        let result = sqlite3_open_v2(path, &db, flags | SQLITE_OPEN_NOMUTEX, nil)
        guard result == SQLITE_OK, let db else {
            sqlite3_close_v2(db)
            throw BenchError("cannot open \(path): SQLite code \(result)")
        }
        handle = db
        self.path = path
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    func execute(_ sql: String) throws(BenchError) {
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else { throw failure(sql) }
    }

    func prepare(_ sql: String) throws(BenchError) -> OpaquePointer {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw failure(sql)
        }
        return statement
    }

    func failure(_ sql: String) -> BenchError {
        BenchError("\(path): \(String(cString: sqlite3_errmsg(handle))) in \(sql.prefix(60))")
    }

    /// SQLite copies bound text at once with this destructor (`SQLITE_TRANSIENT` does not import).
    static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}
