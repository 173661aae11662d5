import CSQLite

/// The reading baseline: every row of the log's `events` table, all columns, stepped
/// through in position order straight from SQLite (nothing decoded, nothing sent).
enum SQLiteReadBaseline {
    /// Returns rows a second and the number of rows read.
    static func rowsPerSecond(logPath: String) throws(BenchError) -> (perSecond: Double, rows: Int) {
        let file = try SQLiteFile(path: logPath, readOnly: true)
        let select = try file.prepare(
            "SELECT position, event_id, stream, category, version, type, data, command_id, correlation_id, "
                + "causation_id, recorded_at FROM events ORDER BY position")
        defer { sqlite3_finalize(select) }
        let started = BenchClock.nanoseconds()
        var rows = 0
        var bytes = 0
        while true {
            let result = sqlite3_step(select)
            if result == SQLITE_DONE { break }
            guard result == SQLITE_ROW else { throw file.failure("SELECT") }
            rows += 1
            // Touch every column the way a reader does: integers read, texts fetched.
            bytes &+=
                Int(sqlite3_column_int64(select, 0)) &+ Int(sqlite3_column_int64(select, 4))
                &+ Int(sqlite3_column_int64(select, 10))
            for column: Int32 in [1, 2, 3, 5, 6, 7, 8, 9] {
                _ = sqlite3_column_text(select, column)
                bytes &+= Int(sqlite3_column_bytes(select, column))
            }
        }
        let seconds = BenchClock.seconds(since: started)
        // `bytes` only keeps the reads from being optimised away.
        return (bytes >= 0 && seconds > 0 ? Double(rows) / seconds : 0, rows)
    }
}
