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

/// One open SQLite database handle with a cache of prepared statements. Not thread-safe:
/// its owner serialises access (the event store keeps it behind a mutex).
final class SQLiteConnection {
    private let handle: OpaquePointer
    private var statements: [String: SQLiteStatement] = [:]

    init(path: String) throws(SQLiteError) {
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
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

    var lastErrorMessage: String { String(cString: sqlite3_errmsg(handle)) }

    func error(_ code: Int32) -> SQLiteError { SQLiteError(code: code, message: lastErrorMessage) }
}

/// A value bound to a statement parameter.
enum SQLiteValue {
    case int(Int64)
    case text(String)
    case null
}

/// A prepared statement owned by its connection.
final class SQLiteStatement {
    private let raw: OpaquePointer
    private unowned let connection: SQLiteConnection

    /// SQLite copies bound text immediately with this destructor (`SQLITE_TRANSIENT` does not import).
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(_ raw: OpaquePointer, connection: SQLiteConnection) {
        self.raw = raw
        self.connection = connection
    }

    func finalize() { sqlite3_finalize(raw) }

    func reset() {
        sqlite3_reset(raw)
        sqlite3_clear_bindings(raw)
    }

    func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let result: Int32
            switch value {
            case .int(let number): result = sqlite3_bind_int64(raw, index, number)
            case .text(let text): result = sqlite3_bind_text(raw, index, text, -1, Self.transient)
            case .null: result = sqlite3_bind_null(raw, index)
            }
            guard result == SQLITE_OK else { throw connection.error(result) }
        }
    }

    /// Advances to the next row: true when there is one, false when done.
    func step() throws(SQLiteError) -> Bool {
        switch sqlite3_step(raw) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let result:
            let error = connection.error(result)
            sqlite3_reset(raw)
            throw error
        }
    }

    /// Runs a statement that returns no rows.
    func run(_ values: [SQLiteValue]) throws(SQLiteError) {
        try bind(values)
        while try step() {}
    }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(raw, column) == SQLITE_NULL }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(raw, column) }

    func string(_ column: Int32) -> String {
        guard let text = sqlite3_column_text(raw, column) else { return "" }
        let count = Int(sqlite3_column_bytes(raw, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }
}
