import Foundation
import LogbookApplication
import LogbookSQLite
import LogbookTestSupport
import Testing

/// What only the SQLite group store promises: its own marked file in WAL, refusing (and
/// leaving alone) every file that is not one, and no transaction left open by a commit that
/// failed.
@Suite struct SQLiteGroupStoreFileTests {
    @Test func aNewFileIsMarkedAsAGroupStoreInWAL() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("groups.sqlite3").path
        _ = try SQLiteGroupStore(path: path)
        #expect(RawSQLResult.firstRow(path: path, sql: "PRAGMA application_id") == [String(0x4C4F_4747)])
        #expect(RawSQLResult.firstRow(path: path, sql: "PRAGMA user_version") == ["1"])
        #expect(RawSQLResult.firstRow(path: path, sql: "PRAGMA journal_mode") == ["wal"])
        // Opening it again finds it as it is.
        #expect(try SQLiteGroupStore(path: path).groups().isEmpty)
    }

    @Test func aFileThatIsNotADatabaseIsRefusedAndLeftAlone() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("groups.sqlite3").path
        let garbage = Data((0..<4_096).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try garbage.write(to: URL(fileURLWithPath: path))
        #expect(throws: GroupStoreError.notAGroupStore("\(path): it is not a SQLite database")) {
            try SQLiteGroupStore(path: path)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage)
    }

    @Test func anotherProgramsDatabaseIsRefusedAndLeftAlone() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("notes.sqlite3").path
        #expect(RawSQLResult(path: path, sql: "CREATE TABLE notes (text TEXT)").succeeded)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(
            throws: GroupStoreError.notAGroupStore(
                "\(path): it is another program's SQLite database (application_id 0)")
        ) { try SQLiteGroupStore(path: path) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(RawSQLResult.firstRow(path: path, sql: "PRAGMA journal_mode") == ["delete"])
    }

    @Test func logbooksOtherFilesAreRefused() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("events.sqlite3").path
        _ = try SQLiteEventStore(path: log)
        #expect(throws: GroupStoreError.notAGroupStore("\(log): it is a Logbook event log")) {
            try SQLiteGroupStore(path: log)
        }
        let readModels = directory.appendingPathComponent("read-models.sqlite3").path
        _ = try SQLiteReadModelStore(path: readModels)
        #expect(throws: GroupStoreError.notAGroupStore("\(readModels): it is a Logbook read-model store")) {
            try SQLiteGroupStore(path: readModels)
        }
        #expect(try SQLiteEventStore(path: log).headPosition() == 0)
        #expect(try SQLiteReadModelStore(path: readModels).checkpoint() == 0)
    }

    @Test func aNewerSchemaIsRefused() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("groups.sqlite3").path
        _ = try SQLiteGroupStore(path: path)
        #expect(RawSQLResult(path: path, sql: "PRAGMA user_version = 2").succeeded)
        #expect(throws: GroupStoreError.notAGroupStore("\(path): its schema version 2 is newer than this build's (1)"))
        {
            try SQLiteGroupStore(path: path)
        }
    }

    @Test func aLockedFileIsUnavailableAndNothingIsLeftHalfDone() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("groups.sqlite3").path
        let store = try SQLiteGroupStore(path: path, busyTimeoutMilliseconds: 0)
        let orders = try Fixture.record("orders")
        try store.commit(Fixture.creating(orders))

        // Another writer holds the lock: the commit is refused as unavailable, and may be retried.
        let lock = try SQLiteWriteLock(path: path)
        var changes = GroupChanges()
        changes.groups[orders.name] = Fixture.progress(inserted: [Fixture.event(1)], scanned: 1)
        let error = try #require(throws: GroupStoreError.self) { try store.commit(changes) }
        guard case .unavailable = error else {
            Issue.record("expected unavailable, got \(error)")
            return
        }
        lock.release()
        try store.commit(changes)
        #expect(try store.pending(of: orders.name, stream: nil, after: 0, limit: 10) == [Fixture.event(1)])

        // A refused commit rolled back: another connection can take the write lock at once.
        var refused = Fixture.creating(try Fixture.record("billing"))
        refused.groups[orders.name] = Fixture.progress(removed: [2])
        #expect(throws: GroupStoreError.failed("group orders: position 2 is not pending")) {
            try store.commit(refused)
        }
        let other = try SQLiteWriteLock(path: path)
        other.release()
        #expect(RawSQLResult.firstRow(path: path, sql: "SELECT count(*) FROM groups") == ["1"])
    }
}
