import LogbookApplication
import LogbookPostgres
import LogbookTestSupport
import Testing

/// What only the PostgreSQL group store promises: its tables go beside a Logbook event log
/// and nowhere else, the log still opens beside them, a newer group schema is refused, and
/// a dropped connection fails one call and is made again by the next.
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
                == (logTables + ["logbook_group_pending", "logbook_group_schema", "logbook_groups"]).sorted())
        // The log opens beside them, and the store opens again over them.
        #expect(try PostgresEventStore(connectionString: database.connectionString).headPosition() == 0)
        #expect(try PostgresGroupStore(url: database.connectionString).groups() == [orders])
    }

    @Test func aNewerGroupSchemaIsRefused() throws {
        let database = try PostgresTestDatabase()
        _ = try PostgresEventStore(connectionString: database.connectionString)
        _ = try PostgresGroupStore(url: database.connectionString)
        try RawPostgres(database.connectionString).run("UPDATE logbook_group_schema SET version = 2")
        let error = try #require(throws: GroupStoreError.self) {
            try PostgresGroupStore(url: database.connectionString)
        }
        guard case .notAGroupStore(let reason) = error else {
            Issue.record("expected notAGroupStore, got \(error)")
            return
        }
        #expect(reason.contains("schema version 2"))
    }

    @Test func aNulInAFailureReasonIsStoredAsAReplacementCharacter() throws {
        let database = try PostgresTestDatabase()
        _ = try PostgresEventStore(connectionString: database.connectionString)
        let store = try PostgresGroupStore(url: database.connectionString)
        let orders = try Fixture.record("orders")
        var changes = Fixture.creating(orders)
        changes.groups[orders.name] = Fixture.progress(inserted: [
            Fixture.event(1, lastFailure: "a\u{0}b"), Fixture.event(2),
        ])
        try store.commit(changes)
        var update = GroupChanges()
        update.groups[orders.name] = Fixture.progress(updated: [Fixture.event(2, attempts: 1, lastFailure: "\u{0}")])
        try store.commit(update)
        #expect(
            try store.pending(of: orders.name, stream: nil, after: 0, limit: 10).map(\.lastFailure) == [
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
        changes.groups[orders.name] = Fixture.progress(inserted: [Fixture.event(1)], scanned: 1)
        try store.commit(changes)
        #expect(try store.pending(of: orders.name, stream: nil, after: 0, limit: 10) == [Fixture.event(1)])
        #expect(try store.groups().first?.scanned == 1)
    }
}
