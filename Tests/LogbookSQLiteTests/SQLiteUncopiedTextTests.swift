import Foundation
import LogbookTestSupport
import Testing

@testable import LogbookSQLite

/// Text bound without SQLite copying it (`SQLiteStatement.bindUncopied`) is read by SQLite
/// from the statement's own room: every row must be written exactly as bound, whether the
/// room was reused, grew in between, or held an empty or a multi-byte text.
@Suite("SQLite statement: text bound without a copy")
struct SQLiteUncopiedTextTests {
    @Test("rows of texts bound without a copy read back exactly, across a growing room and empty texts")
    func rowsReadBackExactly() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let connection = try SQLiteConnection(path: directory.appendingPathComponent("texts.sqlite3").path)
        try connection.execute("CREATE TABLE t (n INTEGER PRIMARY KEY, a TEXT, b TEXT, c TEXT)")
        let rows: [(String, String, String)] = [
            ("first", "", "zoë 🐘"),
            ("short", "x", String(repeating: "y", count: 300)),  // more than the first room
            ("", "", ""),
            (String(repeating: "ü", count: 5_000), "after a growth", "c"),  // grows again
            ("small again", "reusing", "the large room"),
            (String("prefix-and-rest".dropFirst(7)), "d", "e"),  // a string made from a Substring
        ]
        let insert = try connection.statement("INSERT INTO t (n, a, b, c) VALUES (?, ?, ?, ?)")
        for (number, row) in rows.enumerated() {
            insert.startUncopiedTexts(bytes: row.0.utf8.count + row.1.utf8.count + row.2.utf8.count)
            try insert.bind(1, Int64(number))
            try insert.bindUncopied(2, row.0)
            try insert.bindUncopied(3, row.1)
            try insert.bindUncopied(4, row.2)
            try insert.runBound()
        }
        let select = try connection.statement("SELECT a, b, c, a IS NULL, b IS NULL, c IS NULL FROM t ORDER BY n")
        var read: [(String, String, String)] = []
        while try select.step() {
            #expect(select.int64(3) == 0 && select.int64(4) == 0 && select.int64(5) == 0, "an empty text bound NULL")
            read.append((select.string(0), select.string(1), select.string(2)))
        }
        select.reset()
        #expect(read.count == rows.count)
        for (got, want) in zip(read, rows) {
            #expect(got.0 == want.0 && got.1 == want.1 && got.2 == want.2)
        }
    }
}
