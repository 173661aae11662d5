import CSQLite
import Foundation

/// SQL run through a raw SQLite connection of its own, beside whatever store has the file
/// open: how tests damage files, read pragmas and check what the database itself refuses.
/// (`init(postgres:sql:)` does the same on a PostgreSQL database.)
public struct RawSQLResult {
    public let code: Int32
    public let message: String

    /// Runs `sql` on the file at `path` (busy timeout 5 s) and keeps SQLite's result code
    /// and error message.
    public init(path: String, sql: String) {
        var db: OpaquePointer?
        sqlite3_open(path, &db)
        sqlite3_busy_timeout(db, 5_000)
        var error: UnsafeMutablePointer<CChar>?
        code = sqlite3_exec(db, sql, nil, nil, &error)
        message = error.map { String(cString: $0) } ?? ""
        sqlite3_free(error)
        sqlite3_close(db)
    }

    init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    public var succeeded: Bool { code == SQLITE_OK }

    /// The first row of a query's result, as text (empty when there is none).
    public static func firstRow(path: String, sql: String) -> [String] {
        var db: OpaquePointer?
        sqlite3_open(path, &db)
        defer { sqlite3_close(db) }
        sqlite3_busy_timeout(db, 5_000)
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else { return [] }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else { return [] }
        return (0..<sqlite3_column_count(statement)).map { column in
            sqlite3_column_text(statement, column).map { String(cString: $0) } ?? ""
        }
    }
}

/// A write lock on a SQLite file, held by a connection of its own (`BEGIN EXCLUSIVE`) until
/// `release()`: how a test makes every other writer of the file wait, as a long-running
/// writer would.
public final class SQLiteWriteLock: @unchecked Sendable {
    // `db` is used by one thread at a time: the test takes the lock, then releases it.
    private var db: OpaquePointer?

    /// Takes the lock (waiting up to 5 s for it); throws SQLite's refusal when it could not.
    public init(path: String) throws(RawSQLError) {
        sqlite3_open(path, &db)
        sqlite3_busy_timeout(db, 5_000)
        let code = sqlite3_exec(db, "BEGIN EXCLUSIVE", nil, nil, nil)
        guard code == SQLITE_OK else {
            let message = String(cString: sqlite3_errmsg(db))
            sqlite3_close(db)
            throw RawSQLError(code: code, message: message)
        }
    }

    deinit { release() }

    /// Releases the lock from a thread of its own once `milliseconds` have passed: a writer
    /// that waits for locks gets it then, one that does not is refused meanwhile.
    public func release(afterMilliseconds milliseconds: Int) {
        Thread { [self] in
            usleep(UInt32(milliseconds) * 1_000)
            release()
        }.start()
    }

    /// Ends the transaction (writing nothing) and closes the connection.
    public func release() {
        guard let db else { return }
        sqlite3_exec(db, "ROLLBACK", nil, nil, nil)
        sqlite3_close(db)
        self.db = nil
    }
}

/// SQLite's refusal of raw SQL.
public struct RawSQLError: Error {
    public let code: Int32
    public let message: String
}
