import CSQLite
import Foundation

/// The storage baseline: rows inserted straight into a SQLite file from the bench process,
/// in the worker's configuration (WAL, `synchronous=FULL`, one transaction a batch), into a
/// table shaped like the event log (the same columns, the unique stream version, the
/// category index) but with none of Logbook's triggers, command records or decisions.
enum SQLiteInsertBaseline {
    /// Inserts `rows` rows of about `rowBytes` bytes, `batch` rows a transaction, over
    /// `streams` interleaved streams; returns rows a second.
    static func rowsPerSecond(rows: Int, batch: Int, rowBytes: Int, streams: Int = 1_000, directory: String)
        throws(BenchError) -> Double
    {
        let path = directory + "/insert-baseline-\(batch).sqlite3"
        defer {
            for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
        }
        let file = try SQLiteFile(path: path)
        try file.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;")
        try file.execute(
            """
            CREATE TABLE events (
                position INTEGER PRIMARY KEY, event_id TEXT NOT NULL, stream TEXT NOT NULL, category TEXT NOT NULL,
                version INTEGER NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL, command_id TEXT NOT NULL,
                correlation_id TEXT NOT NULL, causation_id TEXT NOT NULL, recorded_at INTEGER NOT NULL,
                UNIQUE (stream, version));
            CREATE INDEX events_by_category ON events (category, position);
            """)
        let insert = try file.prepare(
            "INSERT INTO events VALUES (?, ?, ?, 'bench', ?, 'BenchRowWritten', ?, ?, ?, ?, ?)")
        defer { sqlite3_finalize(insert) }
        let commandId = "00000000-0000-4000-8000-000000000000"
        // Ids and metadata are in the row, so the data column makes up the rest of its size.
        let data = "{\"pad\":\"" + String(repeating: "x", count: max(8, rowBytes - 200)) + "\"}"
        let started = BenchClock.nanoseconds()
        var written = 0
        while written < rows {
            try file.execute("BEGIN IMMEDIATE")
            let end = min(rows, written + batch)
            for row in written..<end {
                let position = Int64(row + 1)
                sqlite3_bind_int64(insert, 1, position)
                sqlite3_bind_text(insert, 2, "event-\(row)", -1, SQLiteFile.transient)
                sqlite3_bind_text(insert, 3, "bench-\(row % streams)", -1, SQLiteFile.transient)
                sqlite3_bind_int64(insert, 4, Int64(row / streams + 1))
                sqlite3_bind_text(insert, 5, data, -1, SQLiteFile.transient)
                sqlite3_bind_text(insert, 6, commandId, -1, SQLiteFile.transient)
                sqlite3_bind_text(insert, 7, commandId, -1, SQLiteFile.transient)
                sqlite3_bind_text(insert, 8, commandId, -1, SQLiteFile.transient)
                sqlite3_bind_int64(insert, 9, position)
                guard sqlite3_step(insert) == SQLITE_DONE else { throw file.failure("INSERT") }
                sqlite3_reset(insert)
            }
            try file.execute("COMMIT")
            written = end
        }
        return Double(rows) / BenchClock.seconds(since: started)
    }
}
