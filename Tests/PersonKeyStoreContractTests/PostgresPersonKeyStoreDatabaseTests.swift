import Foundation
import LogbookApplication
import LogbookPostgres
import LogbookTestSupport
import Testing

/// What only the PostgreSQL key store promises: its tables go beside a Logbook event log and
/// nowhere else, the log still opens beside them, a newer key schema is refused, version 1
/// tables are brought forward with their destroys journalled, stores creating the same users
/// at once agree on their keys, and a destroy runs VACUUM, after which no row version of the
/// table holds the key.
@Suite(
    "PostgreSQL person-key store",
    .enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresPersonKeyStoreDatabaseTests {
    /// The tables of the database's public schema, sorted.
    private static func tables(_ admin: RawPostgres) throws -> [String] {
        try admin.run("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename").map { $0[0] }
    }

    /// The bytes that hexadecimal text stands for.
    private static func bytes(hex: String) throws -> [UInt8] {
        let digits = Array(hex.utf8)
        return try stride(from: 0, to: digits.count, by: 2).map { index in
            try #require(
                UInt8(String(decoding: digits[index..<min(index + 2, digits.count)], as: UTF8.self), radix: 16))
        }
    }

    /// A database of its own holding an event log.
    private static func logDatabase() throws -> PostgresTestDatabase {
        let database = try PostgresTestDatabase()
        _ = try PostgresEventStore(connectionString: database.connectionString)
        return database
    }

    @Test func anEmptyDatabaseIsUnavailableAndLeftEmpty() throws {
        let database = try PostgresTestDatabase()
        let error = try #require(throws: PersonKeyStoreError.self) {
            try PostgresPersonKeyStore(url: database.connectionString)
        }
        guard case .unavailable(let reason) = error else {
            Issue.record("expected unavailable, got \(error)")
            return
        }
        #expect(reason.contains("no Logbook event log"))
        #expect(try Self.tables(RawPostgres(database.connectionString)).isEmpty)
    }

    @Test func anotherProgramsDatabaseIsRefusedAndLeftAlone() throws {
        let database = try PostgresTestDatabase()
        let admin = try RawPostgres(database.connectionString)
        try admin.run("CREATE TABLE notes (text text)")
        let error = try #require(throws: PersonKeyStoreError.self) {
            try PostgresPersonKeyStore(url: database.connectionString)
        }
        guard case .notAKeyStore(_, let reason) = error else {
            Issue.record("expected notAKeyStore, got \(error)")
            return
        }
        #expect(reason.contains("another program"))
        #expect(try Self.tables(admin) == ["notes"])
    }

    @Test func theLogTheGroupsAndTheKeysShareADatabase() throws {
        let database = try Self.logDatabase()
        let admin = try RawPostgres(database.connectionString)
        _ = try PostgresGroupStore(url: database.connectionString)
        let before = try Self.tables(admin)
        let store = try PostgresPersonKeyStore(url: database.connectionString)
        _ = try store.create(["u-1": [1, 2, 3]])
        #expect(
            try Self.tables(admin)
                == (before + [
                    "person_keys", "person_keys_check", "person_keys_destroyed", "person_keys_forgetting",
                    "person_keys_schema",
                ])
                .sorted())
        // The log and the groups open beside them, and the store opens again over them.
        #expect(try PostgresEventStore(connectionString: database.connectionString).headPosition() == 0)
        #expect(try PostgresGroupStore(url: database.connectionString).groups().isEmpty)
        #expect(
            try PostgresPersonKeyStore(url: database.connectionString).keys(for: ["u-1"]) == [
                "u-1": .wrapped([1, 2, 3])
            ])
    }

    @Test func aNewerKeySchemaIsRefused() throws {
        let database = try Self.logDatabase()
        _ = try PostgresPersonKeyStore(url: database.connectionString)
        try RawPostgres(database.connectionString).run("UPDATE person_keys_schema SET version = 3")
        #expect(throws: PersonKeyStoreError.unsupportedSchema(found: 3, supported: 2)) {
            try PostgresPersonKeyStore(url: database.connectionString)
        }
    }

    /// The first release's key tables, exactly as it made them: no destroy journal.
    private static let version1 = """
        CREATE TABLE IF NOT EXISTS person_keys_schema (
            only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
            version  integer NOT NULL CHECK (version >= 1)
        );
        CREATE TABLE IF NOT EXISTS person_keys (
            user_id text PRIMARY KEY,
            wrapped bytea  -- NULL: destroyed
        );
        CREATE TABLE IF NOT EXISTS person_keys_forgetting (
            user_id text PRIMARY KEY
        );
        CREATE TABLE IF NOT EXISTS person_keys_check (
            only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
            value    bytea   NOT NULL
        );
        INSERT INTO person_keys_schema (version) VALUES (1) ON CONFLICT (only_row) DO NOTHING;
        """

    @Test func version1TablesJournalTheUsersTheyDestroyedWhenOpened() throws {
        let database = try Self.logDatabase()
        let admin = try RawPostgres(database.connectionString)
        try admin.run(Self.version1)
        try admin.run(
            """
            INSERT INTO person_keys (user_id, wrapped) VALUES
                ('u-c', NULL), ('u-a', '\\x0102'), ('u-é', NULL), ('u-B', NULL), ('u-d', '\\x03');
            INSERT INTO person_keys_forgetting (user_id) VALUES ('u-d');
            INSERT INTO person_keys_check (value) VALUES ('\\xC0FFEE');
            """)
        let store = try PostgresPersonKeyStore(url: database.connectionString)
        #expect(try admin.run("SELECT version FROM person_keys_schema") == [["2"]])
        // Marked in the order of their ids' bytes; everything else as it was.
        #expect(try store.destroyedSince(0) == DestroyedKeys(userIds: ["u-B", "u-c", "u-é"], mark: 3))
        #expect(
            try store.keys(for: ["u-a", "u-B", "u-d"]) == [
                "u-a": .wrapped([1, 2]), "u-B": .destroyed, "u-d": .wrapped([3]),
            ])
        #expect(try store.forgettingUsers() == ["u-d"])
        #expect(try store.masterKeyCheck() == [0xC0, 0xFF, 0xEE])
        // Destroys go on from there, and another opening finds the tables current.
        try store.destroy("u-d")
        let again = try PostgresPersonKeyStore(url: database.connectionString)
        #expect(try again.destroyedSince(3) == DestroyedKeys(userIds: ["u-d"], mark: 4))
        #expect(try again.destroyedSince(0).userIds == ["u-B", "u-c", "u-é", "u-d"])
    }

    /// Two stores opening version 1 tables at once: one migrates, the other finds them
    /// current, and the journal is filled once.
    @Test func storesOpeningVersion1TablesAtOnceMigrateThemOnce() throws {
        let database = try Self.logDatabase()
        let admin = try RawPostgres(database.connectionString)
        try admin.run(Self.version1)
        try admin.run(
            "INSERT INTO person_keys (user_id, wrapped) VALUES ('u-1', NULL), ('u-2', NULL), ('u-3', '\\x01')")
        let errors = onThreads(4) { _ in
            _ = try PostgresPersonKeyStore(url: database.connectionString)
        }
        #expect(errors.isEmpty, "\(errors)")
        #expect(
            try admin.run("SELECT mark, user_id FROM person_keys_destroyed ORDER BY mark") == [
                ["1", "u-1"], ["2", "u-2"],
            ])
    }

    @Test func aMalformedAddressIsRefused() throws {
        let error = try #require(throws: PersonKeyStoreError.self) { try PostgresPersonKeyStore(url: "postgresql://[") }
        guard case .notAKeyStore(_, let reason) = error else {
            Issue.record("expected notAKeyStore, got \(error)")
            return
        }
        #expect(reason.contains("malformed"))
    }

    @Test func aUserIdHoldingNULIsRefused() throws {
        let database = try Self.logDatabase()
        let store = try PostgresPersonKeyStore(url: database.connectionString)
        #expect(throws: PersonKeyStoreError.self) { try store.create(["a\u{0}b": [1]]) }
        #expect(throws: PersonKeyStoreError.self) { try store.destroy("a\u{0}b") }
        #expect(try store.create(["ab": [1]]) == ["ab": .wrapped([1])])
    }

    @Test func storesCreatingTheSameUsersAtOnceAgree() throws {
        let database = try Self.logDatabase()
        let stores = try (0..<3).map { _ in try PostgresPersonKeyStore(url: database.connectionString) }
        var canaries = Canaries(seed: 5)
        for round in 0..<5 {
            let userIds = (0..<200).map { _ in canaries.userId() }
            let offers = stores.indices.map { _ in
                Dictionary(uniqueKeysWithValues: userIds.map { ($0, canaries.key()) })
            }
            let answers = Shared<[Int: [String: StoredPersonKey]]>([:])
            let ready = Shared(0)
            let errors = onThreads(stores.count) { index in
                // Start together: each thread waits until all are there.
                ready.update { $0 += 1 }
                while ready.value < stores.count { usleep(100) }
                let answer = try stores[index].create(offers[index])
                answers.update { $0[index] = answer }
            }
            #expect(errors.isEmpty, "round \(round): \(errors)")
            let all = answers.value
            #expect(all.count == stores.count)
            let first = try #require(all[0])
            for index in stores.indices { #expect(all[index] == first, "round \(round), store \(index)") }
            #expect(try stores[1].keys(for: userIds) == first)
            // Every user got the key one of the stores offered.
            for userId in userIds {
                guard case .wrapped(let key) = first[userId] else {
                    Issue.record("round \(round): \(userId) has no key")
                    continue
                }
                #expect(offers.contains { $0[userId] == key })
            }
        }
    }

    @Test func aDestroyRunsVacuumAndNoRowVersionKeepsTheKey() throws {
        let database = try Self.logDatabase()
        let admin = try RawPostgres(database.connectionString)
        try admin.run("CREATE EXTENSION IF NOT EXISTS pageinspect")
        let store = try PostgresPersonKeyStore(url: database.connectionString)
        var canaries = Canaries(seed: 64)
        var kept = canaries.keys(400)
        _ = try store.create(kept)
        var destroyed: [String: [UInt8]] = [:]
        var generator = SeededGenerator(seed: 128)
        let vacuums = "SELECT vacuum_count FROM pg_stat_user_tables WHERE relname = 'person_keys'"
        let before = try #require(Int(try RawPostgres(database.connectionString).run(vacuums).first?.first ?? ""))
        for userId in kept.keys.shuffled(using: &generator).prefix(200) {
            try store.destroy(userId)
            destroyed[userId] = kept.removeValue(forKey: userId)
        }
        let after = try #require(Int(try RawPostgres(database.connectionString).run(vacuums).first?.first ?? ""))
        #expect(after - before == 200)

        // Every tuple on every page of the table, dead or alive, as pageinspect reads it.
        let tuples = try admin.run(
            """
            SELECT encode(t_data, 'hex')
            FROM generate_series(0, (pg_relation_size('person_keys') / current_setting('block_size')::int)::int - 1) AS b,
                 heap_page_items(get_raw_page('person_keys', b)) AS i
            WHERE i.t_data IS NOT NULL
            """)
        // Eight zeros between tuples: no match runs across two of them.
        var bytes: [UInt8] = []
        for row in tuples { bytes += try Self.bytes(hex: row[0]) + [0, 0, 0, 0, 0, 0, 0, 0] }
        #expect(Canaries.found(Array(destroyed.values), in: bytes).count == 0)
        #expect(Canaries.found(Array(kept.values), in: bytes).count == kept.count)
        #expect(try store.keys(for: Array(destroyed.keys)).values.allSatisfy { $0 == .destroyed })
    }

    /// The server closed the store's connection while it was idle: the next call finds it
    /// closed before sending anything, connects again and succeeds.
    @Test func aConnectionDroppedWhileIdleIsReplacedBeforeTheNextCall() throws {
        let database = try Self.logDatabase()
        let store = try PostgresPersonKeyStore(url: database.connectionString)
        _ = try store.create(["u-1": [1]])
        let admin = try RawPostgres(database.connectionString)
        let killed = try admin.run(
            "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity "
                + "WHERE datname = current_database() AND pid <> pg_backend_pid()")
        #expect(killed == [["t"]])
        try store.destroy("u-1")
        #expect(try store.keys(for: ["u-1"]) == ["u-1": .destroyed])
    }
}
