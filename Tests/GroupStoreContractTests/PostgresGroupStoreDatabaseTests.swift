import LogbookApplication
import LogbookPostgres
import LogbookTestSupport
import Testing

/// What only the PostgreSQL group store promises: its tables go beside a Logbook event log
/// and nowhere else, the log still opens beside them, a newer group schema is refused, version 1
/// tables are brought to version 2 when opened, and a dropped connection fails one call and is
/// made again by the next.
@Suite(
    "PostgreSQL group store",
    .enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresGroupStoreDatabaseTests {
    /// The tables of the database's public schema, sorted.
    private static func tables(_ admin: RawPostgres) throws -> [String] {
        try admin.run("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename").map { $0[0] }
    }

    @Test func anEmptyDatabaseIsUnavailableAndLeftEmpty() throws {
        let database = try PostgresTestDatabase()
        let error = try #require(throws: GroupStoreError.self) {
            try PostgresGroupStore(url: database.connectionString)
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
        let error = try #require(throws: GroupStoreError.self) {
            try PostgresGroupStore(url: database.connectionString)
        }
        guard case .notAGroupStore(let reason) = error else {
            Issue.record("expected notAGroupStore, got \(error)")
            return
        }
        #expect(reason.contains("another program"))
        #expect(try Self.tables(admin) == ["notes"])
    }

    @Test func theLogAndTheGroupTablesShareADatabase() throws {
        let database = try PostgresTestDatabase()
        let admin = try RawPostgres(database.connectionString)
        _ = try PostgresEventStore(connectionString: database.connectionString)
        let logTables = try Self.tables(admin)
        let store = try PostgresGroupStore(url: database.connectionString)
        let orders = try Fixture.record("orders")
        try store.commit(Fixture.creating(orders))
        #expect(
            try Self.tables(admin)
                == (logTables + ["logbook_group_outcomes", "logbook_group_schema", "logbook_groups"]).sorted())
        // The log opens beside them, and the store opens again over them.
        #expect(try PostgresEventStore(connectionString: database.connectionString).headPosition() == 0)
        #expect(try PostgresGroupStore(url: database.connectionString).groups() == [orders])
    }

    @Test func aNewerGroupSchemaIsRefused() throws {
        let database = try PostgresTestDatabase()
        _ = try PostgresEventStore(connectionString: database.connectionString)
        _ = try PostgresGroupStore(url: database.connectionString)
        try RawPostgres(database.connectionString).run("UPDATE logbook_group_schema SET version = 3")
        let error = try #require(throws: GroupStoreError.self) {
            try PostgresGroupStore(url: database.connectionString)
        }
        guard case .notAGroupStore(let reason) = error else {
            Issue.record("expected notAGroupStore, got \(error)")
            return
        }
        #expect(reason.contains("schema version 3"))
    }

    /// The first release's tables, exactly as it made them.
    private static let version1 = """
        CREATE TABLE IF NOT EXISTS logbook_group_schema (
            only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
            version  integer NOT NULL CHECK (version >= 1)
        );
        CREATE TABLE IF NOT EXISTS logbook_groups (
            name          text    PRIMARY KEY,
            categories    text    NOT NULL,
            ack_wait_ms   integer NOT NULL,
            max_deliver   integer NOT NULL,
            max_in_flight integer NOT NULL,
            created_at    bigint  NOT NULL,
            checkpoint    bigint  NOT NULL,
            scanned       bigint  NOT NULL
        );
        CREATE TABLE IF NOT EXISTS logbook_group_pending (
            group_name   text    NOT NULL,
            position     bigint  NOT NULL,
            stream       text    NOT NULL,
            attempts     integer NOT NULL,
            parked       boolean NOT NULL,
            last_failure text,
            payload      bytea   NOT NULL,
            PRIMARY KEY (group_name, position)
        );
        CREATE INDEX IF NOT EXISTS logbook_group_pending_by_stream ON logbook_group_pending (group_name, stream, position);
        INSERT INTO logbook_group_schema (version) VALUES (1) ON CONFLICT (only_row) DO NOTHING;
        """

    @Test func version1TablesKeepTheirProgressWhenOpened() throws {
        let database = try PostgresTestDatabase()
        _ = try PostgresEventStore(connectionString: database.connectionString)
        let admin = try RawPostgres(database.connectionString)
        try admin.run(Self.version1)
        // The rows of the SQLite test (`version1Rows`), in PostgreSQL's spelling.
        try admin.run(
            """
            INSERT INTO logbook_groups VALUES ('orders', 'product,user', 30000, 3, 64, 1700000000000, 10, 20);
            INSERT INTO logbook_groups VALUES ('billing', 'order', 1000, 5, 8, 1700000000001, 7, 7);
            INSERT INTO logbook_group_pending VALUES ('orders', 11, 'user-1', 0, false, NULL, '\\x7B7D');
            INSERT INTO logbook_group_pending VALUES ('orders', 13, 'user-2', 1, false, NULL, '\\x7B7D');
            INSERT INTO logbook_group_pending VALUES ('orders', 15, 'user-3', 3, true, 'exit status 7', '\\x7B7D');
            INSERT INTO logbook_group_pending VALUES ('orders', 17, 'user-4', 0, false, 'expired', '\\x7B7D');
            """)
        let store = try PostgresGroupStore(url: database.connectionString)
        #expect(try admin.run("SELECT version FROM logbook_group_schema") == [["2"]])
        #expect(try Self.tables(admin).contains("logbook_group_pending") == false)
        SQLiteGroupStoreFileTests.expectMigratedVersion1(
            try store.groups(), try store.outcomes(of: GroupName("orders"), after: 0, limit: 100))
        var changes = GroupChanges()
        changes.groups[try GroupName("orders")] = Fixture.progress([.done(11), .done(13)], checkpoint: 14)
        try store.commit(changes)
        #expect(
            try PostgresGroupStore(url: database.connectionString).outcomes(
                of: GroupName("orders"), after: 0, limit: 100
            ).map(\.position) == [15, 16, 17, 18, 19, 20])
    }

    /// Two stores opening version 1 tables at once: one migrates, the other finds them current.
    @Test func storesOpeningVersion1TablesAtOnceMigrateThemOnce() throws {
        let database = try PostgresTestDatabase()
        _ = try PostgresEventStore(connectionString: database.connectionString)
        let admin = try RawPostgres(database.connectionString)
        try admin.run(Self.version1)
        try admin.run("INSERT INTO logbook_groups VALUES ('orders', 'user', 30000, 5, 64, 0, 0, 3)")
        let errors = onThreads(4) { _ in
            _ = try PostgresGroupStore(url: database.connectionString)
        }
        #expect(errors.isEmpty, "\(errors)")
        #expect(
            try admin.run("SELECT position, done FROM logbook_group_outcomes ORDER BY position") == [
                ["1", "t"], ["2", "t"], ["3", "t"],
            ])
    }

    @Test func aNulInAFailureReasonIsStoredAsAReplacementCharacter() throws {
        let database = try PostgresTestDatabase()
        _ = try PostgresEventStore(connectionString: database.connectionString)
        let store = try PostgresGroupStore(url: database.connectionString)
        let orders = try Fixture.record("orders")
        var changes = Fixture.creating(orders)
        changes.groups[orders.name] = Fixture.progress([Fixture.failed(1, lastFailure: "a\u{0}b"), .done(2)])
        try store.commit(changes)
        var update = GroupChanges()
        update.groups[orders.name] = Fixture.progress([Fixture.failed(2, attempts: 1, lastFailure: "\u{0}")])
        try store.commit(update)
        #expect(
            try store.outcomes(of: orders.name, after: 0, limit: 10).map(\.lastFailure) == [
                "a\u{FFFD}b", "\u{FFFD}",
            ])
    }

    @Test func aMalformedAddressIsRefused() throws {
        let error = try #require(throws: GroupStoreError.self) { try PostgresGroupStore(url: "postgresql://[") }
        guard case .notAGroupStore(let reason) = error else {
            Issue.record("expected notAGroupStore, got \(error)")
            return
        }
        #expect(reason.contains("malformed"))
    }

    /// The server closed the store's connection while it was idle: the next call finds it
    /// closed before sending anything, connects again and succeeds.
    @Test func aConnectionDroppedWhileIdleIsReplacedBeforeTheNextCall() throws {
        let database = try PostgresTestDatabase()
        _ = try PostgresEventStore(connectionString: database.connectionString)
        let store = try PostgresGroupStore(url: database.connectionString)
        let orders = try Fixture.record("orders")
        try store.commit(Fixture.creating(orders))
        let admin = try RawPostgres(database.connectionString)
        let killed = try admin.run(
            "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity "
                + "WHERE datname = current_database() AND pid <> pg_backend_pid()")
        #expect(killed == [["t"]])

        var changes = GroupChanges()
        changes.groups[orders.name] = Fixture.progress([.done(2)], checkpoint: 1)
        try store.commit(changes)
        #expect(try store.outcomes(of: orders.name, after: 0, limit: 10) == [.done(2)])
        #expect(try store.groups().first?.checkpoint == 1)
    }
}
