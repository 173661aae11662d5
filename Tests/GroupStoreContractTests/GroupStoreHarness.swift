import Foundation
import LogbookApplication
import LogbookMemory
import LogbookPostgres
import LogbookSQLite
import LogbookTestSupport
import Testing

/// The group stores every contract test runs against. PostgreSQL joins when a test server
/// is configured (`PostgresTestServer`), or is required.
enum GroupStoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case memory, sqlite, postgres

    static var allCases: [GroupStoreKind] {
        PostgresTestServer.isEnabled ? [.memory, .sqlite, .postgres] : [.memory, .sqlite]
    }

    var testDescription: String { rawValue }
}

/// One group store under test, with what the contract needs beyond the protocol: opening
/// it again on the same file or database (for durability). A SQLite store gets a folder of
/// its own, a PostgreSQL store a database of its own holding an event log (the group
/// tables go beside one), dropped with the harness.
final class GroupStoreHarness {
    let kind: GroupStoreKind
    private(set) var store: any GroupStore
    let directory: URL?
    let database: PostgresTestDatabase?

    init(_ kind: GroupStoreKind) throws {
        self.kind = kind
        switch kind {
        case .memory:
            directory = nil
            database = nil
            store = InMemoryGroupStore()
        case .sqlite:
            let directory = try TemporaryDirectory.make()
            self.directory = directory
            database = nil
            store = try SQLiteGroupStore(path: directory.appendingPathComponent("groups.sqlite3").path)
        case .postgres:
            directory = nil
            let database = try PostgresTestDatabase()
            self.database = database
            _ = try PostgresEventStore(connectionString: database.connectionString)
            store = try PostgresGroupStore(url: database.connectionString)
        }
    }

    deinit {
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    var path: String? { directory?.appendingPathComponent("groups.sqlite3").path }

    /// Closes the store and opens it again on the same file or database (a new connection);
    /// the in-memory store has nothing to reopen, so it stays.
    func reopen() throws {
        switch kind {
        case .memory: return
        case .sqlite:
            let path = try #require(path)
            store = InMemoryGroupStore()  // close the old connection before opening a new one
            store = try SQLiteGroupStore(path: path)
        case .postgres:
            let database = try #require(database)
            store = InMemoryGroupStore()
            store = try PostgresGroupStore(url: database.connectionString)
        }
    }

    /// Every group and its outcomes, as the store reports them.
    func snapshot() throws -> GroupStoreSnapshot {
        let records = try store.groups()
        var outcomes: [GroupName: [EventOutcome]] = [:]
        for record in records {
            outcomes[record.name] = try store.outcomes(of: record.name, after: 0, limit: 1_000_000)
        }
        return GroupStoreSnapshot(records: records, outcomes: outcomes)
    }
}

/// What a group store holds, read back through the protocol.
struct GroupStoreSnapshot: Equatable {
    var records: [GroupRecord]
    var outcomes: [GroupName: [EventOutcome]]
}
