import Foundation
import LogbookApplication
import LogbookCrypto
import LogbookPostgres
import LogbookSQLite
import LogbookTestSupport
import Testing

/// The durable stores a two-process test runs on: SQLite always, PostgreSQL when a test
/// server is configured, or is required.
enum SharedStoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgres

    static var allCases: [SharedStoreKind] { PostgresTestServer.isEnabled ? [.sqlite, .postgres] : [.sqlite] }

    var testDescription: String { rawValue }
}

/// Two processes on one log and one key store, each with its own stores, vault and cache:
/// once one has forgotten a user (its `append` of the `UserForgotten` returned), every read
/// the other begins serves that user's values as forgotten, though it never read the
/// `UserForgotten` and had the user's key cached.
@Suite("Two processes sharing a log and a key store")
struct SharedKeyStoreVaultTests {
    /// One process: its own connections to the log and to the key store, its vault.
    struct Process {
        let store: ProtectedEventStore
        let vault: PersonalDataVault
    }

    /// The log and the key store both processes open, removed with the rig.
    final class Rig {
        let kind: SharedStoreKind
        let master = MasterKey.generate()
        private let directory: URL?
        private let database: PostgresTestDatabase?

        init(_ kind: SharedStoreKind) throws {
            self.kind = kind
            switch kind {
            case .sqlite:
                directory = try TemporaryDirectory.make()
                database = nil
            case .postgres:
                directory = nil
                database = try PostgresTestDatabase()
            }
        }

        deinit {
            if let directory { try? FileManager.default.removeItem(at: directory) }
        }

        /// A process of its own on the rig's log and key store.
        func process() throws -> Process {
            let log: any EventStore
            let keys: any PersonKeyStore
            if let directory {
                log = try SQLiteEventStore(path: directory.appendingPathComponent("events.sqlite3").path)
                keys = try SQLitePersonKeyStore(path: directory.appendingPathComponent("keys.sqlite3").path)
            } else {
                let database = try #require(database)
                log = try PostgresEventStore(connectionString: database.connectionString)
                keys = try PostgresPersonKeyStore(url: database.connectionString)
            }
            let vault = try PersonalDataVault(master: master, keyStore: keys)
            return Process(store: ProtectedEventStore(log, vault: vault), vault: vault)
        }
    }

    /// The payloads of `userId`'s registration, with personal values: the user's event,
    /// and the claim of their address on a stream of its own (which never holds the
    /// user's `UserForgotten`).
    static func plain(_ userId: String) -> [String] {
        [
            #"{"userId":"\#(userId)","name":"Name of \#(userId)","email":"\#(userId)@example.com","gender":"other","subscription":"free"}"#,
            #"{"email":"\#(userId)@example.com","userId":"\#(userId)"}"#,
        ]
    }

    /// What every reader gets for `userId`'s registration once the user is forgotten.
    static func forgotten(_ userId: String) -> [String] {
        [
            #"{"userId":"\#(userId)","name":null,"email":null,"gender":null,"subscription":"free","forgotten":true}"#,
            #"{"email":null,"userId":"\#(userId)","forgotten":true}"#,
        ]
    }

    /// The request that registers `userId` (`plain`).
    static func registration(_ userId: String) -> AppendRequest {
        let payloads = plain(userId)
        return Requests.request(
            "register-\(userId)",
            [
                Requests.event("user-\(userId)", "UserRegistered", data: payloads[0]),
                Requests.event("claims-\(userId)", "EmailClaimed", data: payloads[1]),
            ], expecting: ["user-\(userId)": .noStream])
    }

    /// Forgets `userId` through `process`'s log, as its worker would: the batch with the
    /// `UserForgotten`, whose `append` destroys the key before it returns.
    static func forget(_ userId: String, through process: Process) throws {
        let results = try process.store.append([
            Requests.request(
                "forget-\(userId)",
                [Requests.event("user-\(userId)", "UserForgotten", data: #"{"userId":"\#(userId)"}"#)],
                expecting: ["user-\(userId)": .exactly(1)])
        ])
        #expect(results.first?.committed != nil, "\(results)")
    }

    /// Each user's registration payloads, in the order given: forgotten for those in
    /// `forgotten`, plain for the others.
    static func payloads(_ users: [String], forgotten: Set<String>) -> [String] {
        users.flatMap { forgotten.contains($0) ? Self.forgotten($0) : plain($0) }
    }

    @Test(arguments: SharedStoreKind.allCases)
    func everyReadBegunAfterAnotherProcessForgotServesTheUserAsForgotten(kind: SharedStoreKind) throws {
        let rig = try Rig(kind)
        let a = try rig.process()
        let b = try rig.process()
        let users = (1...6).map { "u\($0)" }
        // B registers everyone (making and caching their keys) and reads them in clear; the
        // registrations take the first positions, and every read of B below stops there,
        // before any `UserForgotten`.
        let registered = try b.store.append(users.map(Self.registration))
        #expect(registered.allSatisfy { $0.committed != nil }, "\(registered)")
        let count = 2 * users.count
        #expect(
            try b.store.read(fromPosition: 1, limit: count, categories: nil).map(\.data)
                == Self.payloads(users, forgotten: []))
        #expect(
            try a.store.read(fromPosition: 1, limit: count, categories: nil).map(\.data)
                == Self.payloads(users, forgotten: []), "both processes read the same")

        // A forgets one user at a time; B then reads with one kind of read.
        try Self.forget("u1", through: a)
        #expect(
            try b.store.read(fromPosition: 1, limit: count, categories: nil).map(\.data)
                == Self.payloads(users, forgotten: ["u1"]))

        try Self.forget("u2", through: a)
        let visited = try b.store.visitedEvents(fromPosition: 1, limit: count, categories: nil)
        #expect(visited.map(\.data) == Self.payloads(users, forgotten: ["u1", "u2"]))

        try Self.forget("u3", through: a)
        #expect(try b.store.readStream("user-u3", fromVersion: 1, limit: 1).map(\.data) == [Self.forgotten("u3")[0]])

        try Self.forget("u4", through: a)
        let record = try #require(try b.store.commandRecord("register-u4"))
        guard case .appended(let committed) = record else {
            Issue.record("expected the registration's events, got \(record)")
            return
        }
        #expect(committed.events.map(\.data) == Self.forgotten("u4"))

        try Self.forget("u5", through: a)
        let streams = try b.store.readWholeStreams(["claims-u5", "claims-u6"])
        #expect(streams["claims-u5"]?.map(\.data) == [Self.forgotten("u5")[1]])
        #expect(streams["claims-u6"]?.map(\.data) == [Self.plain("u6")[1]])

        // A retried registration is a duplicate, whose record B opens for the forgotten user.
        try Self.forget("u6", through: a)
        let retried = try b.store.append([Self.registration("u6")])
        let duplicate = try #require(retried.first?.duplicate)
        guard case .appended(let again) = duplicate else {
            Issue.record("expected the registration's events, got \(duplicate)")
            return
        }
        #expect(again.events.map(\.data) == Self.forgotten("u6"))

        // Nothing of theirs is served in clear any more, read from the start.
        #expect(
            try b.store.read(fromPosition: 1, limit: count, categories: nil).map(\.data)
                == Self.payloads(users, forgotten: Set(users)))
    }

    @Test(arguments: SharedStoreKind.allCases)
    func aVaultOpenedAfterDestroysReadsOnFromTheLatestMark(kind: SharedStoreKind) throws {
        let rig = try Rig(kind)
        let a = try rig.process()
        let users = ["u1", "u2", "u3"]
        _ = try a.store.append(users.map(Self.registration))
        try Self.forget("u1", through: a)
        // B opens after the first forgetting, caches the others' keys, and still sees the next.
        let b = try rig.process()
        #expect(
            try b.store.read(fromPosition: 1, limit: 6, categories: nil).map(\.data)
                == Self.payloads(users, forgotten: ["u1"]))
        try Self.forget("u3", through: a)
        #expect(
            try b.store.read(fromPosition: 1, limit: 6, categories: nil).map(\.data)
                == Self.payloads(users, forgotten: ["u1", "u3"]))
    }
}
