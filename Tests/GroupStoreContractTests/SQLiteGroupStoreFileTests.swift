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
        #expect(RawSQLResult.firstRow(path: path, sql: "PRAGMA user_version") == ["2"])
        #expect(RawSQLResult.firstRow(path: path, sql: "PRAGMA journal_mode") == ["wal"])
        #expect(RawSQLResult.firstRow(path: path, sql: "PRAGMA page_size") == ["16384"])
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
        #expect(RawSQLResult(path: path, sql: "PRAGMA user_version = 3").succeeded)
        #expect(throws: GroupStoreError.notAGroupStore("\(path): its schema version 3 is newer than this build's (2)"))
        {
            try SQLiteGroupStore(path: path)
        }
    }

    /// The first release's file, exactly as it made it: a copy of each pending event.
    private static let version1 = """
        CREATE TABLE groups (
            name          TEXT    PRIMARY KEY,
            categories    TEXT    NOT NULL,  -- comma-separated, sorted
            ack_wait_ms   INTEGER NOT NULL,
            max_deliver   INTEGER NOT NULL,
            max_in_flight INTEGER NOT NULL,
            created_at    INTEGER NOT NULL,  -- milliseconds since the epoch, UTC
            checkpoint    INTEGER NOT NULL,
            scanned       INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE pending (
            group_name   TEXT    NOT NULL,
            position     INTEGER NOT NULL,
            stream       TEXT    NOT NULL,
            attempts     INTEGER NOT NULL,
            parked       INTEGER NOT NULL CHECK (parked IN (0, 1)),
            last_failure TEXT,
            payload      BLOB    NOT NULL,
            PRIMARY KEY (group_name, position)
        ) WITHOUT ROWID;
        CREATE INDEX pending_by_stream ON pending (group_name, stream, position);
        PRAGMA application_id = \(0x4C4F_4747);
        PRAGMA user_version = 1;
        """

    /// Version 1 rows: `orders` at checkpoint 10, scanned through 20, with 11 pending never
    /// delivered, 13 delivered once, 15 parked, 17 retried (0 attempts, a failure kept); so
    /// 12, 14, 16 and 18–20 are done. `billing` has nothing past its checkpoint.
    static let version1Rows = """
        INSERT INTO groups VALUES ('orders', 'product,user', 30000, 3, 64, 1700000000000, 10, 20);
        INSERT INTO groups VALUES ('billing', 'order', 1000, 5, 8, 1700000000001, 7, 7);
        INSERT INTO pending VALUES ('orders', 11, 'user-1', 0, 0, NULL, x'7B7D');
        INSERT INTO pending VALUES ('orders', 13, 'user-2', 1, 0, NULL, x'7B7D');
        INSERT INTO pending VALUES ('orders', 15, 'user-3', 3, 1, 'exit status 7', x'7B7D');
        INSERT INTO pending VALUES ('orders', 17, 'user-4', 0, 0, 'expired', x'7B7D');
        """

    @Test func aVersion1FileKeepsItsProgressWhenOpened() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("groups.sqlite3").path
        #expect(RawSQLResult(path: path, sql: Self.version1).succeeded)
        #expect(RawSQLResult(path: path, sql: Self.version1Rows).succeeded)
        let store = try SQLiteGroupStore(path: path)
        #expect(RawSQLResult.firstRow(path: path, sql: "PRAGMA user_version") == ["2"])
        #expect(
            RawSQLResult.firstRow(path: path, sql: "SELECT count(*) FROM sqlite_schema WHERE name = 'pending'") == ["0"]
        )
        Self.expectMigratedVersion1(
            try store.groups(), try store.outcomes(of: GroupName("orders"), after: 0, limit: 100))
        #expect(try store.outcomes(of: GroupName("billing"), after: 0, limit: 100).isEmpty)
        // It goes on from there, and another opening finds the file current.
        var changes = GroupChanges()
        changes.groups[try GroupName("orders")] = Fixture.progress([.done(11), .done(13)], checkpoint: 14)
        try store.commit(changes)
        #expect(
            try SQLiteGroupStore(path: path).outcomes(of: GroupName("orders"), after: 0, limit: 100).map(\.position)
                == [15, 16, 17, 18, 19, 20])
    }

    /// What a migrated `version1Rows` holds, whatever the store.
    static func expectMigratedVersion1(_ records: [GroupRecord], _ outcomes: [EventOutcome]) {
        #expect(
            records == [
                GroupRecord(
                    name: GroupName(stored: "billing"), categories: ["order"],
                    settings: GroupSettings(checked: 1_000, maxDeliver: 5, maxInFlight: 8),
                    createdAt: 1_700_000_000_001,
                    checkpoint: 7),
                GroupRecord(
                    name: GroupName(stored: "orders"), categories: ["product", "user"],
                    settings: GroupSettings(checked: 30_000, maxDeliver: 3, maxInFlight: 64),
                    createdAt: 1_700_000_000_000, checkpoint: 10),
            ])
        #expect(
            outcomes == [
                .done(12), .failed(13, attempts: 1, parked: false, lastFailure: nil), .done(14),
                .failed(15, attempts: 3, parked: true, lastFailure: "exit status 7"), .done(16),
                .failed(17, attempts: 0, parked: false, lastFailure: "expired"), .done(18), .done(19), .done(20),
            ])
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
        changes.groups[orders.name] = Fixture.progress([.done(2)], checkpoint: 1)
        let error = try #require(throws: GroupStoreError.self) { try store.commit(changes) }
        guard case .unavailable = error else {
            Issue.record("expected unavailable, got \(error)")
            return
        }
        lock.release()
        try store.commit(changes)
        #expect(try store.outcomes(of: orders.name, after: 0, limit: 10) == [.done(2)])

        // A refused commit rolled back: another connection can take the write lock at once.
        var refused = Fixture.creating(try Fixture.record("billing"))
        refused.groups[orders.name] = Fixture.progress([.done(1)])
        #expect(throws: GroupStoreError.failed("group orders: position 1 is at or before its checkpoint 1")) {
            try store.commit(refused)
        }
        let other = try SQLiteWriteLock(path: path)
        other.release()
        #expect(RawSQLResult.firstRow(path: path, sql: "SELECT count(*) FROM groups") == ["1"])
    }
}
