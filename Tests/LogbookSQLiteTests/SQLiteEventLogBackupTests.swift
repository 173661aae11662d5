import Foundation
import LogbookApplication
import LogbookSQLite
import LogbookTestSupport
import Testing

/// `SQLiteEventLogBackup` on real files: a copy reads back as the same log (also while a
/// store has the log open and writes on), and what it refuses leaves nothing behind.
@Suite("SQLite event log backup")
struct SQLiteEventLogBackupTests {
    @Test("the copy of a log in use reads back as the same events; the source goes on taking appends")
    func copyReadsBack() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("events.sqlite3").path
        let store = try SQLiteEventStore(path: source)
        for index in 1...20 { _ = try store.append([Requests.simple("c\(index)", stream: "a-\(index % 3)")]) }
        let destination = directory.appendingPathComponent("copy.sqlite3").path
        let summary = try SQLiteEventLogBackup.copy(from: source, to: destination)
        #expect(summary.head == 20 && summary.events == 20 && summary.bytes > 0)
        _ = try store.append([Requests.simple("c21", stream: "a-1")])

        let copy = try SQLiteEventStore(path: destination)
        #expect(try copy.headPosition() == 20)
        #expect(
            try copy.read(fromPosition: 1, limit: 100, categories: nil)
                == store.read(fromPosition: 1, limit: 20, categories: nil))
        #expect(!FileManager.default.fileExists(atPath: destination + ".partial"))
    }

    @Test("refused: an existing destination, a partial copy in the way, another program's database")
    func refusals() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("events.sqlite3").path
        _ = try SQLiteEventStore(path: source).append([Requests.simple("c1", stream: "a-1")])

        let taken = directory.appendingPathComponent("taken").path
        #expect(FileManager.default.createFile(atPath: taken, contents: Data("mine".utf8)))
        #expect(throws: SQLiteEventLogBackupError.destinationExists(taken)) {
            try SQLiteEventLogBackup.copy(from: source, to: taken)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: taken)) == Data("mine".utf8))

        let interrupted = directory.appendingPathComponent("interrupted").path
        #expect(FileManager.default.createFile(atPath: interrupted + ".partial", contents: Data()))
        #expect(throws: SQLiteEventLogBackupError.partialExists(interrupted + ".partial")) {
            try SQLiteEventLogBackup.copy(from: source, to: interrupted)
        }

        let foreign = directory.appendingPathComponent("other.sqlite3").path
        #expect(RawSQLResult(path: foreign, sql: "CREATE TABLE notes (id INTEGER PRIMARY KEY)").succeeded)
        let fromForeign = directory.appendingPathComponent("from-foreign").path
        #expect {
            try SQLiteEventLogBackup.copy(from: foreign, to: fromForeign)
        } throws: { error in
            guard case .notAnEventLog(foreign, _)? = error as? SQLiteEventLogBackupError else { return false }
            return true
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(!left.contains { $0.hasPrefix("from-foreign") }, "\(left)")
    }
}
