import Foundation
import LogbookApplication
import LogbookMemory
import LogbookPostgres
import LogbookSQLite
import LogbookTestSupport
import Synchronization
import Testing

/// The key stores every contract test runs against. PostgreSQL joins when a test server is
/// configured (`PostgresTestServer`), or is required.
enum PersonKeyStoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case memory, sqlite, postgres

    static var allCases: [PersonKeyStoreKind] {
        PostgresTestServer.isEnabled ? [.memory, .sqlite, .postgres] : [.memory, .sqlite]
    }

    var testDescription: String { rawValue }
}

/// One key store under test, with what the contract needs beyond the protocol: opening it
/// again on the same file or database (for durability). A SQLite store gets a folder of its
/// own, a PostgreSQL store a database of its own holding an event log (the key tables go
/// beside one), dropped with the harness.
final class PersonKeyStoreHarness {
    let kind: PersonKeyStoreKind
    private(set) var store: any PersonKeyStore
    let directory: URL?
    let database: PostgresTestDatabase?

    init(_ kind: PersonKeyStoreKind) throws {
        self.kind = kind
        switch kind {
        case .memory:
            directory = nil
            database = nil
            store = InMemoryPersonKeyStore()
        case .sqlite:
            let directory = try TemporaryDirectory.make()
            self.directory = directory
            database = nil
            store = try SQLitePersonKeyStore(path: directory.appendingPathComponent("keys.sqlite3").path)
        case .postgres:
            directory = nil
            let database = try PostgresTestDatabase()
            self.database = database
            _ = try PostgresEventStore(connectionString: database.connectionString)
            store = try PostgresPersonKeyStore(url: database.connectionString)
        }
    }

    deinit {
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    var path: String? { directory?.appendingPathComponent("keys.sqlite3").path }

    /// Another store on the same file or database, with a connection of its own, as another
    /// process would open it; the in-memory store has no other, so it is the same one.
    func anotherStore() throws -> any PersonKeyStore {
        switch kind {
        case .memory: return store
        case .sqlite: return try SQLitePersonKeyStore(path: try #require(path))
        case .postgres: return try PostgresPersonKeyStore(url: try #require(database).connectionString)
        }
    }

    /// Closes the store and opens it again on the same file or database (a new connection);
    /// the in-memory store has nothing to reopen, so it stays.
    func reopen() throws {
        switch kind {
        case .memory: return
        case .sqlite:
            let path = try #require(path)
            store = InMemoryPersonKeyStore()  // close the old connection before opening a new one
            store = try SQLitePersonKeyStore(path: path)
        case .postgres:
            let database = try #require(database)
            store = InMemoryPersonKeyStore()
            store = try PostgresPersonKeyStore(url: database.connectionString)
        }
    }
}

/// Keys whose bytes are random and recognisable: 48 bytes each, from a seeded generator,
/// so that a scan of raw bytes finds each one, or does not, without a false match.
struct Canaries {
    private var generator: SeededGenerator

    init(seed: UInt64) { generator = SeededGenerator(seed: seed) }

    /// A user id like the service's (a random UUID's text).
    mutating func userId() -> String {
        let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let uuid = UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
        return uuid.uuidString.lowercased()
    }

    mutating func key() -> [UInt8] { (0..<48).map { _ in UInt8.random(in: 0...255, using: &generator) } }

    /// `count` new users, each with a key.
    mutating func keys(_ count: Int) -> [String: [UInt8]] {
        var keys: [String: [UInt8]] = [:]
        while keys.count < count { keys[userId()] = key() }
        return keys
    }

    /// Which of `needles` occur in `haystack`: every window of `haystack` is looked up by
    /// its first eight bytes, then compared whole.
    static func found(_ needles: [[UInt8]], in haystack: [UInt8]) -> Set<[UInt8]> {
        var byPrefix: [UInt64: [[UInt8]]] = [:]
        for needle in needles where needle.count >= 8 { byPrefix[prefix(needle, at: 0), default: []].append(needle) }
        var found: Set<[UInt8]> = []
        guard haystack.count >= 8 else { return found }
        for offset in 0...(haystack.count - 8) {
            guard let candidates = byPrefix[prefix(haystack, at: offset)] else { continue }
            for needle in candidates where offset + needle.count <= haystack.count {
                if haystack[offset..<(offset + needle.count)].elementsEqual(needle) { found.insert(needle) }
            }
        }
        return found
    }

    private static func prefix(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in offset..<(offset + 8) { value = value << 8 | UInt64(bytes[index]) }
        return value
    }
}

/// A value several threads read and change, behind a lock.
final class Shared<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) { mutex = Mutex(value) }

    var value: Value { mutex.withLock { $0 } }

    func update(_ change: (inout Value) -> Void) { mutex.withLock { change(&$0) } }
}
