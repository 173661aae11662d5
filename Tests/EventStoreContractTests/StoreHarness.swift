import Foundation
import LogbookApplication
import LogbookMemory
import LogbookPostgres
import LogbookSQLite
import LogbookTestSupport
import Synchronization
import Testing

/// The implementations every contract test runs against. PostgreSQL joins when a test
/// server is configured (`PostgresTestServer`), or is required.
/// `sqliteDeferredSyncs` is the worker's SQLite configuration: a writer that commits with
/// deferred syncs, flushed after each append, read through a connection that stops at the
/// durable head (`DeferredSyncsStore`).
enum StoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case memory, sqlite
    case sqliteDeferredSyncs = "sqlite-deferred-syncs"
    case postgres

    static var allCases: [StoreKind] {
        PostgresTestServer.isEnabled
            ? [.memory, .sqlite, .sqliteDeferredSyncs, .postgres] : [.memory, .sqlite, .sqliteDeferredSyncs]
    }

    var testDescription: String { rawValue }
}

/// One store under test, with what the contract needs beyond the protocol: reopening
/// (for durability) and raw tampering (for the append-only guarantee). A PostgreSQL store
/// gets a database of its own, dropped when neither the harness nor the store needs it.
final class StoreHarness {
    let kind: StoreKind
    private(set) var store: any EventStore
    let directory: URL?
    let database: PostgresTestDatabase?

    init(_ kind: StoreKind) throws {
        self.kind = kind
        switch kind {
        case .memory:
            directory = nil
            database = nil
            store = InMemoryEventStore()
        case .sqlite:
            let directory = try TemporaryDirectory.make()
            self.directory = directory
            database = nil
            store = try SQLiteEventStore(path: directory.appendingPathComponent("events.sqlite3").path)
        case .sqliteDeferredSyncs:
            let directory = try TemporaryDirectory.make()
            self.directory = directory
            database = nil
            store = try DeferredSyncsStore(path: directory.appendingPathComponent("events.sqlite3").path)
        case .postgres:
            directory = nil
            let database = try PostgresTestDatabase()
            self.database = database
            store = DatabaseHoldingStore(
                inner: try PostgresEventStore(connectionString: database.connectionString), database: database)
        }
    }

    deinit {
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    var databasePath: String? { directory?.appendingPathComponent("events.sqlite3").path }

    /// Closes and reopens the store; the in-memory store has nothing to reopen, so it stays.
    func reopen() throws {
        if let database {
            store = InMemoryEventStore()  // drop the old connection before opening a new one
            store = DatabaseHoldingStore(
                inner: try PostgresEventStore(connectionString: database.connectionString), database: database)
        }
        guard kind == .sqlite || kind == .sqliteDeferredSyncs, let databasePath else { return }
        store = InMemoryEventStore()  // drop the old connection before opening a new one
        store = kind == .sqlite ? try SQLiteEventStore(path: databasePath) : try DeferredSyncsStore(path: databasePath)
    }

    /// Runs raw SQL against the file or database behind the store, on a connection of its
    /// own; nil when the store has neither.
    func rawSQL(_ sql: String) -> RawSQLResult? {
        if let database { return RawSQLResult(postgres: database.connectionString, sql: sql) }
        guard let databasePath else { return nil }
        return RawSQLResult(path: databasePath, sql: sql)
    }
}

/// A PostgreSQL store that keeps its test database alive as long as the store is: tests
/// often keep only the store and let the harness go.
final class DatabaseHoldingStore: ForwardingEventStore {
    let inner: any EventStore
    let database: PostgresTestDatabase

    init(inner: any EventStore, database: PostgresTestDatabase) {
        self.inner = inner
        self.database = database
    }

    func append(_ batch: [AppendRequest]) throws(EventStoreError) -> [AppendResult] { try inner.append(batch) }
}

/// The worker's SQLite connections as one store: appends go to a writer with deferred
/// syncs and are flushed before `append` returns (what the commit stage does before any
/// reply), reads go to a reader that sees only the durable head. So every contract test
/// checks that a flushed append is all a durable reader needs.
final class DeferredSyncsStore: ForwardingEventStore {
    let writer: SQLiteEventStore
    let inner: any EventStore
    let horizon: SQLiteDurableHorizon

    init(path: String) throws {
        horizon = try SQLiteDurableHorizon.opening(path: path)
        writer = try SQLiteEventStore(path: path, durability: .deferredSyncs(horizon))
        inner = try SQLiteEventStore(path: path, durability: .readsDurable(horizon))
    }

    func append(_ batch: [AppendRequest]) throws(EventStoreError) -> [AppendResult] {
        let results = try writer.append(batch)
        try horizon.flush()
        return results
    }
}
