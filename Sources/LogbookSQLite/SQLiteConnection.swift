import CSQLite
import Glibc

/// One open SQLite database handle with a cache of prepared statements. Not thread-safe:
/// its owner serialises access (the event store keeps it behind a mutex).
final class SQLiteConnection {
    private let handle: OpaquePointer
    private var statements: [String: SQLiteStatement] = [:]

    /// Opens `path` for reading and writing, creating it if missing; with `readOnly`, opens
    /// only a file that exists, and never writes it.
    init(path: String, readOnly: Bool = false) throws(SQLiteError) {
        var db: OpaquePointer?
        let access = readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        let flags = access | SQLITE_OPEN_NOMUTEX
        let result = sqlite3_open_v2(path, &db, flags, nil)
        guard result == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close_v2(db)
            throw SQLiteError(code: result, message: message)
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
    }

    deinit {
        for statement in statements.values { statement.finalize() }
        sqlite3_close_v2(handle)
    }

    /// The path of the main database's WAL file as SQLite names it (beside the file a
    /// symbolic link points to, not beside the link), or nil for a database without a file.
    var walPath: String? {
        guard let name = sqlite3_db_filename(handle, "main"), name.pointee != 0,
            let wal = sqlite3_filename_wal(name)
        else { return nil }
        return String(cString: wal)
    }

    /// Runs one or more statements that return no rows of interest.
    func execute(_ sql: String) throws(SQLiteError) {
        var message: UnsafeMutablePointer<CChar>?
        let result = sqlite3_exec(handle, sql, nil, nil, &message)
        guard result == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? lastErrorMessage
            sqlite3_free(message)
            throw SQLiteError(code: result, message: text)
        }
    }

    /// A prepared statement for `sql`, reset and cleared, kept for reuse. A caller that
    /// stops stepping before the last row resets it, so that it holds no read transaction.
    func statement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let cached = statements[sql] {
            cached.reset()
            return cached
        }
        var raw: OpaquePointer?
        let result = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &raw, nil)
        guard result == SQLITE_OK, let raw else { throw SQLiteError(code: result, message: lastErrorMessage) }
        let statement = SQLiteStatement(raw, connection: self)
        statements[sql] = statement
        return statement
    }

    /// The single integer a query returns (its first column of its first row), or nil for no row.
    func scalar(_ sql: String, _ bindings: [SQLiteValue] = []) throws(SQLiteError) -> Int64? {
        let statement = try statement(sql)
        try statement.bind(bindings)
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        return statement.isNull(0) ? nil : statement.int64(0)
    }

    /// The single text a query returns, or nil for no row.
    func text(_ sql: String) throws(SQLiteError) -> String? {
        let statement = try statement(sql)
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        return statement.isNull(0) ? nil : statement.string(0)
    }

    /// Replaces this database's content with a copy of `source`'s, page by page, in one step
    /// of SQLite's online backup API: one read transaction on `source`, so the copy is the
    /// database as of one commit, while other connections go on writing it (WAL). A busy
    /// source (a read lock not to be had for now) is tried again, for about `busyMilliseconds`.
    func copy(from source: SQLiteConnection, busyMilliseconds: Int) throws(SQLiteError) {
        guard let backup = sqlite3_backup_init(handle, "main", source.handle, "main") else {
            throw error(sqlite3_errcode(handle))
        }
        var result = sqlite3_backup_step(backup, -1)
        var waited = 0
        while (result == SQLITE_BUSY || result == SQLITE_LOCKED) && waited < busyMilliseconds {
            usleep(10_000)
            waited += 10
            result = sqlite3_backup_step(backup, -1)
        }
        let finished = sqlite3_backup_finish(backup)
        guard result == SQLITE_DONE else {
            throw SQLiteError(code: result, message: String(cString: sqlite3_errstr(result)))
        }
        guard finished == SQLITE_OK else { throw error(finished) }
    }

    /// A PASSIVE checkpoint of the database: copies what no reader needs from the WAL back
    /// into the file, waiting for nobody. SQLite's result code, the WAL's frames and how many
    /// of them are now in the file (when all are, the next write starts the WAL over).
    func checkpointPassively() -> (result: Int32, walFrames: Int32, copiedFrames: Int32) {
        var frames: Int32 = -1
        var copied: Int32 = -1
        let result = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, &frames, &copied)
        return (result, frames, copied)
    }

    /// From now on this connection's commits tell `checkpointer` the WAL's length instead of
    /// checkpointing themselves, except when it answers that the WAL grew too long. The
    /// checkpointer must outlive the connection or `removeWALHook()` must come first.
    func checkpoint(in checkpointer: SQLiteCheckpointer) {
        sqlite3_wal_hook(
            handle,
            { context, db, _, pages in
                guard let context, let db else { return SQLITE_OK }
                let checkpointer = Unmanaged<SQLiteCheckpointer>.fromOpaque(context).takeUnretainedValue()
                if checkpointer.walGrew(toPages: pages) {
                    checkpointer.writerCheckpointed(
                        result: sqlite3_wal_checkpoint_v2(db, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil))
                }
                return SQLITE_OK
            }, Unmanaged.passUnretained(checkpointer).toOpaque())
    }

    /// Back to SQLite's automatic checkpoint in the committing call.
    func removeWALHook() {
        sqlite3_wal_hook(handle, nil, nil)
        setAutomaticCheckpoint(pages: 1_000)
    }

    /// SQLite's automatic checkpoint runs in a commit that leaves the WAL at `pages` pages
    /// or more (0 turns it off). A call costs next to nothing.
    func setAutomaticCheckpoint(pages: Int32) {
        sqlite3_wal_autocheckpoint(handle, pages)
    }

    /// This connection's page cache so far: lookups it answered, pages it had to read, and
    /// dirty pages it wrote to the WAL in the middle of a transaction because it was full.
    var pageCacheCounters: SQLitePageCacheCounters {
        func counter(_ operation: Int32) -> UInt32 {
            var current: Int32 = 0
            var highwater: Int32 = 0
            // Fails only for an operation this SQLite does not know (all three exist since 3.23).
            let result = sqlite3_db_status(handle, operation, &current, &highwater, 0)
            precondition(result == SQLITE_OK, "sqlite3_db_status(\(operation)) returned \(result)")
            return UInt32(bitPattern: current)
        }
        return SQLitePageCacheCounters(
            hits: counter(SQLITE_DBSTATUS_CACHE_HIT), misses: counter(SQLITE_DBSTATUS_CACHE_MISS),
            spills: counter(SQLITE_DBSTATUS_CACHE_SPILL))
    }

    /// A transaction is open (`BEGIN` ran and no `COMMIT` or `ROLLBACK` ended it yet).
    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// How long a statement that meets another connection's lock waits for it; 0 fails at
    /// once with `SQLITE_BUSY`.
    func setBusyTimeout(milliseconds: Int) {
        sqlite3_busy_timeout(handle, Int32(clamping: milliseconds))
    }

    /// The rows the last INSERT, UPDATE or DELETE of this connection changed.
    var changes: Int { Int(sqlite3_changes(handle)) }

    var lastErrorMessage: String { String(cString: sqlite3_errmsg(handle)) }

    func error(_ code: Int32) -> SQLiteError { SQLiteError(code: code, message: lastErrorMessage) }
}
