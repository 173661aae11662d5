import CSQLite

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
    /// The bytes of the texts bound with `bindUncopied`, which SQLite reads in place: it
    /// lives as long as the statement (freed after its connection finalized it).
    private var uncopied: UnsafeMutableRawBufferPointer?
    /// How much of `uncopied` the texts bound since `startUncopiedTexts` take.
    private var uncopiedUsed = 0

    /// SQLite copies bound text immediately with this destructor (`SQLITE_TRANSIENT` does not import).
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(_ raw: OpaquePointer, connection: SQLiteConnection) {
        self.raw = raw
        self.connection = connection
    }

    deinit { uncopied?.deallocate() }

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

    /// Binds an integer to parameter `index` (1-based), with no array or boxing in between.
    func bind(_ index: Int32, _ number: Int64) throws(SQLiteError) {
        let result = sqlite3_bind_int64(raw, index, number)
        guard result == SQLITE_OK else { throw connection.error(result) }
    }

    /// Binds text to parameter `index` straight from the string's UTF-8 bytes, which SQLite
    /// copies at once (a string without contiguous UTF-8 is copied into an array first).
    func bind(_ index: Int32, _ text: String) throws(SQLiteError) {
        let result =
            text.utf8.withContiguousStorageIfAvailable { bytes in
                bindText(index, bytes)
            } ?? Array(text.utf8).withUnsafeBufferPointer { bytes in bindText(index, bytes) }
        guard result == SQLITE_OK else { throw connection.error(result) }
    }

    private func bindText(_ index: Int32, _ bytes: UnsafeBufferPointer<UInt8>) -> Int32 {
        // A null pointer would bind NULL, so the empty string gets a pointer of its own.
        guard let base = bytes.baseAddress, !bytes.isEmpty else {
            return sqlite3_bind_text64(raw, index, "", 0, Self.transient, UInt8(SQLITE_UTF8))
        }
        return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) { text in
            sqlite3_bind_text64(raw, index, text, UInt64(bytes.count), Self.transient, UInt8(SQLITE_UTF8))
        }
    }

    /// Makes room for `bytes` of UTF-8 to bind with `bindUncopied` before the next run,
    /// reusing the room the texts bound that way before took. When it must grow, every
    /// binding is cleared first, so none points into the room given up.
    func startUncopiedTexts(bytes: Int) {
        let capacity = uncopied?.count ?? 0
        if bytes > capacity {
            sqlite3_clear_bindings(raw)
            uncopied?.deallocate()
            uncopied = .allocate(byteCount: max(bytes, 2 * capacity, 256), alignment: 1)
        }
        uncopiedUsed = 0
    }

    /// Binds text to parameter `index` without SQLite copying it (`SQLITE_STATIC`): its
    /// UTF-8 goes into this statement's own room (made by `startUncopiedTexts`, which must
    /// have counted it), where SQLite reads it in place until it is bound again. SQLite as
    /// Debian builds it has no lookaside memory, so every copied text is a malloc and a free.
    func bindUncopied(_ index: Int32, _ text: String) throws(SQLiteError) {
        let count = text.utf8.count
        guard let room = uncopied, let base = room.baseAddress, uncopiedUsed + count <= room.count else {
            preconditionFailure("bindUncopied: \(count) bytes more than startUncopiedTexts made room for")
        }
        let start = base + uncopiedUsed
        let copy = { (bytes: UnsafeBufferPointer<UInt8>) in
            UnsafeMutableRawBufferPointer(start: start, count: count).copyMemory(from: UnsafeRawBufferPointer(bytes))
        }
        if text.utf8.withContiguousStorageIfAvailable(copy) == nil {
            var contiguous = text  // `withUTF8` makes it contiguous first (never needed for a native string)
            contiguous.withUTF8(copy)
        }
        uncopiedUsed += count
        // A non-null pointer even for the empty string: a null one would bind NULL.
        let result = sqlite3_bind_text64(
            raw, index, start.assumingMemoryBound(to: CChar.self), UInt64(count), nil, UInt8(SQLITE_UTF8))
        guard result == SQLITE_OK else { throw connection.error(result) }
    }

    /// Binds `bytes` as a blob to parameter `index`, which SQLite copies at once (an empty
    /// array is a blob of no bytes, never NULL).
    func bind(_ index: Int32, bytes: [UInt8]) throws(SQLiteError) {
        let result = bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress, !buffer.isEmpty else { return sqlite3_bind_zeroblob(raw, index, 0) }
            return sqlite3_bind_blob64(raw, index, base, UInt64(buffer.count), Self.transient)
        }
        guard result == SQLITE_OK else { throw connection.error(result) }
    }

    func bindNull(_ index: Int32) throws(SQLiteError) {
        let result = sqlite3_bind_null(raw, index)
        guard result == SQLITE_OK else { throw connection.error(result) }
    }

    /// Runs the statement, already bound, to its end and resets it (keeping its bindings).
    func runBound() throws(SQLiteError) {
        while try step() {}
        sqlite3_reset(raw)
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

    /// The column's text as borrowed UTF-8 bytes, valid until the next `step` or `reset`
    /// (empty for NULL).
    func bytes(_ column: Int32) -> UnsafeBufferPointer<UInt8> {
        let text = sqlite3_column_text(raw, column)
        return UnsafeBufferPointer(start: text, count: text == nil ? 0 : Int(sqlite3_column_bytes(raw, column)))
    }

    func string(_ column: Int32) -> String { String(decoding: bytes(column), as: UTF8.self) }

    /// The column's bytes as a blob, copied (empty for NULL or a blob of no bytes).
    func blob(_ column: Int32) -> [UInt8] {
        guard let bytes = sqlite3_column_blob(raw, column) else { return [] }
        let count = Int(sqlite3_column_bytes(raw, column))
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }
}
