import Foundation
import LogbookApplication
import LogbookSQLite
import LogbookTestSupport
import Testing

/// What only the SQLite key store promises: its own marked file with a rollback journal,
/// refusing (and leaving alone) every file that is not one, a version 1 file brought
/// forward with its destroys journalled, and no byte of a destroyed key left in any file of
/// its folder.
@Suite struct SQLitePersonKeyStoreFileTests {
    @Test func aNewFileIsMarkedAsAKeyStoreWithARollbackJournal() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("keys.sqlite3").path
        _ = try SQLitePersonKeyStore(path: path)
        #expect(RawSQLResult.firstRow(path: path, sql: "PRAGMA application_id") == [String(0x4C4F_474B)])
        #expect(RawSQLResult.firstRow(path: path, sql: "PRAGMA user_version") == ["2"])
        #expect(RawSQLResult.firstRow(path: path, sql: "PRAGMA journal_mode") == ["delete"])
        #expect(
            RawSQLResult.firstRow(
                path: path,
                sql: "SELECT group_concat(name, ',') FROM (SELECT name FROM sqlite_schema "
                    + "WHERE type = 'table' ORDER BY name)") == ["destroyed,forgetting,master_key_check,person_keys"])
        // Opening it again finds it as it is.
        #expect(try SQLitePersonKeyStore(path: path).forgettingUsers().isEmpty)
    }

    @Test func aKeyStoreSwitchedToWALIsSwitchedBack() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("keys.sqlite3").path
        _ = try SQLitePersonKeyStore(path: path).create(["u-1": [1, 2, 3]])
        #expect(RawSQLResult.firstRow(path: path, sql: "PRAGMA journal_mode = WAL") == ["wal"])
        let store = try SQLitePersonKeyStore(path: path)
        #expect(RawSQLResult.firstRow(path: path, sql: "PRAGMA journal_mode") == ["delete"])
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        #expect(try store.keys(for: ["u-1"]) == ["u-1": .wrapped([1, 2, 3])])
    }

    @Test func aFileThatIsNotADatabaseIsRefusedAndLeftAlone() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("keys.sqlite3").path
        let garbage = Data((0..<4_096).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try garbage.write(to: URL(fileURLWithPath: path))
        #expect(throws: PersonKeyStoreError.notAKeyStore(path: path, reason: "it is not a SQLite database")) {
            try SQLitePersonKeyStore(path: path)
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
            throws: PersonKeyStoreError.notAKeyStore(
                path: path, reason: "it is another program's SQLite database (application_id 0)")
        ) { try SQLitePersonKeyStore(path: path) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test func logbooksOtherFilesAreRefusedAndLeftAlone() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("events.sqlite3").path
        _ = try SQLiteEventStore(path: log)
        #expect(throws: PersonKeyStoreError.notAKeyStore(path: log, reason: "it is a Logbook event log")) {
            try SQLitePersonKeyStore(path: log)
        }
        let readModels = directory.appendingPathComponent("read-models.sqlite3").path
        _ = try SQLiteReadModelStore(path: readModels)
        #expect(throws: PersonKeyStoreError.notAKeyStore(path: readModels, reason: "it is a Logbook read-model store"))
        {
            try SQLitePersonKeyStore(path: readModels)
        }
        let groups = directory.appendingPathComponent("groups.sqlite3").path
        _ = try SQLiteGroupStore(path: groups)
        #expect(throws: PersonKeyStoreError.notAKeyStore(path: groups, reason: "it is a Logbook group store")) {
            try SQLitePersonKeyStore(path: groups)
        }
        // Each still opens as what it is, in WAL as it was.
        #expect(try SQLiteEventStore(path: log).headPosition() == 0)
        #expect(try SQLiteReadModelStore(path: readModels).checkpoint() == 0)
        #expect(try SQLiteGroupStore(path: groups).groups().isEmpty)
        for path in [log, readModels, groups] {
            #expect(RawSQLResult.firstRow(path: path, sql: "PRAGMA journal_mode") == ["wal"])
        }
        // And a key store is not taken for any of them.
        let keys = directory.appendingPathComponent("keys.sqlite3").path
        _ = try SQLitePersonKeyStore(path: keys)
        #expect(throws: GroupStoreError.self) { try SQLiteGroupStore(path: keys) }
        #expect(throws: EventStoreError.self) { try SQLiteEventStore(path: keys) }
    }

    @Test func aNewerSchemaIsRefused() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("keys.sqlite3").path
        _ = try SQLitePersonKeyStore(path: path)
        #expect(RawSQLResult(path: path, sql: "PRAGMA user_version = 3").succeeded)
        #expect(throws: PersonKeyStoreError.unsupportedSchema(found: 3, supported: 2)) {
            try SQLitePersonKeyStore(path: path)
        }
    }

    /// The first release's file, exactly as it made it: no destroy journal.
    private static let version1 = """
        CREATE TABLE person_keys (
            user_id TEXT NOT NULL PRIMARY KEY,
            wrapped BLOB CHECK (wrapped IS NULL OR typeof(wrapped) = 'blob')  -- NULL: destroyed
        );
        CREATE TABLE forgetting (
            user_id TEXT NOT NULL PRIMARY KEY
        ) WITHOUT ROWID;
        CREATE TABLE master_key_check (
            only_row INTEGER PRIMARY KEY CHECK (only_row = 1),
            value    BLOB    NOT NULL
        );
        PRAGMA application_id = \(0x4C4F_474B);
        PRAGMA user_version = 1;
        """

    @Test func aVersion1FileJournalsTheUsersItDestroyedWhenOpened() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("keys.sqlite3").path
        #expect(RawSQLResult(path: path, sql: Self.version1).succeeded)
        #expect(
            RawSQLResult(
                path: path,
                sql: """
                    INSERT INTO person_keys (user_id, wrapped) VALUES
                        ('u-c', NULL), ('u-a', x'0102'), ('u-é', NULL), ('u-b', NULL), ('u-d', x'03');
                    INSERT INTO forgetting (user_id) VALUES ('u-d');
                    INSERT INTO master_key_check (only_row, value) VALUES (1, x'C0FFEE');
                    """
            ).succeeded)
        let store = try SQLitePersonKeyStore(path: path)
        #expect(RawSQLResult.firstRow(path: path, sql: "PRAGMA user_version") == ["2"])
        // Marked in the order of their ids' bytes; everything else as it was.
        #expect(try store.destroyedSince(0) == DestroyedKeys(userIds: ["u-b", "u-c", "u-é"], mark: 3))
        #expect(
            try store.keys(for: ["u-a", "u-b", "u-d"]) == [
                "u-a": .wrapped([1, 2]), "u-b": .destroyed, "u-d": .wrapped([3]),
            ])
        #expect(try store.forgettingUsers() == ["u-d"])
        #expect(try store.masterKeyCheck() == [0xC0, 0xFF, 0xEE])
        // Destroys go on from there, and another opening finds the file current.
        try store.destroy("u-d")
        #expect(try SQLitePersonKeyStore(path: path).destroyedSince(3) == DestroyedKeys(userIds: ["u-d"], mark: 4))
        #expect(try store.destroyedSince(0).userIds == ["u-b", "u-c", "u-é", "u-d"])
    }

    @Test func aLockedFileIsUnavailableAndTheCallMayBeRetried() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("keys.sqlite3").path
        let store = try SQLitePersonKeyStore(path: path, busyTimeoutMilliseconds: 0)
        _ = try store.create(["u-1": [1]])
        let lock = try SQLiteWriteLock(path: path)
        let error = try #require(throws: PersonKeyStoreError.self) { try store.destroy("u-1") }
        guard case .unavailable = error else {
            Issue.record("expected unavailable, got \(error)")
            return
        }
        lock.release()
        #expect(try store.keys(for: ["u-1"]) == ["u-1": .wrapped([1])])
        try store.destroy("u-1")
        #expect(try store.keys(for: ["u-1"]) == ["u-1": .destroyed])
    }

    // MARK: What a destroy leaves

    /// Every file in `directory` (the database and any journal or WAL beside it) with its bytes.
    private static func files(in directory: URL) throws -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            files[name] = Array(try Data(contentsOf: directory.appendingPathComponent(name)))
        }
        return files
    }

    /// Scans every file in `directory`: none holds a destroyed key, and the database holds
    /// every kept one (so the scan does see keys where they are).
    private static func expectOnlyKept(
        _ kept: [String: [UInt8]], destroyed: [String: [UInt8]], in directory: URL,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let files = try files(in: directory)
        #expect(files.keys.sorted() == ["keys.sqlite3"], sourceLocation: sourceLocation)
        for (name, bytes) in files {
            let leaked = Canaries.found(Array(destroyed.values), in: bytes).count
            #expect(leaked == 0, "\(leaked) destroyed keys are in \(name)", sourceLocation: sourceLocation)
        }
        let database = try #require(files["keys.sqlite3"], sourceLocation: sourceLocation)
        let found = Canaries.found(Array(kept.values), in: database)
        #expect(
            found.count == kept.count, "\(kept.count - found.count) kept keys are missing",
            sourceLocation: sourceLocation)
    }

    @Test func aDestroyedKeyIsInNoFileOfTheFolder() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("keys.sqlite3").path
        var store: SQLitePersonKeyStore? = try SQLitePersonKeyStore(path: path)
        var canaries = Canaries(seed: 48)
        var generator = SeededGenerator(seed: 96)
        var kept: [String: [UInt8]] = [:]
        var destroyed: [String: [UInt8]] = [:]

        // A thousand keys in batches, then half of them destroyed at random, one by one.
        for _ in 0..<4 {
            let batch = canaries.keys(250)
            _ = try store?.create(batch)
            kept.merge(batch) { first, _ in first }
        }
        for userId in kept.keys.shuffled(using: &generator).prefix(500) {
            try store?.destroy(userId)
            destroyed[userId] = kept.removeValue(forKey: userId)
        }
        try Self.expectOnlyKept(kept, destroyed: destroyed, in: directory)

        // More keys after the destroys (into the space they freed, if any), users never seen
        // destroyed, some forgetting marks, and then most of what is left destroyed, so that
        // whole pages lose every key they held.
        let later = canaries.keys(200)
        _ = try store?.create(later)
        kept.merge(later) { first, _ in first }
        for _ in 0..<30 { try store?.destroy(canaries.userId()) }
        for (offset, userId) in kept.keys.shuffled(using: &generator).prefix(500).enumerated() {
            if offset % 25 == 0 { try store?.beginForgetting(userId) }
            try store?.destroy(userId)
            destroyed[userId] = kept.removeValue(forKey: userId)
        }
        #expect(kept.count == 200)
        #expect(try store?.forgettingUsers() == [])
        #expect(try store?.keys(for: Array(destroyed.keys)).values.allSatisfy { $0 == .destroyed } == true)
        #expect(try store?.keys(for: Array(kept.keys)) == kept.mapValues { .wrapped($0) })
        try Self.expectOnlyKept(kept, destroyed: destroyed, in: directory)

        // Closed and opened again: still nothing.
        store = nil
        store = try SQLitePersonKeyStore(path: path)
        #expect(try store?.keys(for: Array(kept.keys)) == kept.mapValues { .wrapped($0) })
        try Self.expectOnlyKept(kept, destroyed: destroyed, in: directory)
    }
}
