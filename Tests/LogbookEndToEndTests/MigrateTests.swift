import Foundation
import LogbookApplication
import LogbookCrypto
import LogbookDomain
import LogbookJSON
import LogbookPostgres
import LogbookSQLite
import LogbookTestSupport
import Testing

/// `logbook migrate`: a log written before personal data was sealed (values in clear,
/// addresses in stream names, every type at version 1) copied into a sealed one.
@Suite("End to end: logbook migrate")
struct MigrateTests {
    /// Writes an old log of about `events` events at `path`: users registering (a claim on
    /// `email-<address>`), changing address (a claim and a release), posting, buying; and a
    /// refused registration recorded with its answer every 500 users.
    static func writeOldLog(at path: String, events: Int) throws -> (users: Int, answered: [String]) {
        try writeOldLog(into: try SQLiteEventStore(path: path, evolution: EventEvolution([])), events: events)
    }

    /// The same into `store`, which must keep every type at version 1 (no upcasting).
    static func writeOldLog(into store: any EventStore, events: Int) throws -> (users: Int, answered: [String]) {
        var batch: [AppendRequest] = []
        var written = 0
        var users = 0
        var answered: [String] = []
        var next = 0
        func id() -> String {
            next += 1
            return "old-\(next)"
        }
        func command(_ events: [(String, String, String)]) {
            let commandId = id()
            batch.append(
                AppendRequest(
                    metadata: EventMetadata(
                        commandId: commandId, correlationId: "corr-\(commandId)", causationId: commandId),
                    events: events.map { stream, type, data in
                        NewEvent(
                            eventId: "\(commandId)-\(type)", stream: stream, type: type, data: data,
                            recordedAt: 1_700_000_000_000 + Int64(next))
                    }, expectations: [:]))
            written += events.count
        }
        func flush() throws {
            let results = try store.append(batch)
            #expect(results.allSatisfy { if case .committed = $0 { true } else { false } })
            batch.removeAll()
        }
        command([
            (
                "product-p1", "ProductAdded",
                #"{"productId":"p1","name":"Tea","price":"2.50","category":"food","stock":1000000}"#
            )
        ])
        var stock = 1_000_000
        while written < events {
            let user = "u\(users)"
            let email = "person\(users)@old.example"
            command([
                (
                    "user-\(user)", "UserRegistered",
                    #"{"userId":"\#(user)","name":"Person \#(users)","email":"\#(email)","gender":"female","birthday":"1990-02-28","subscription":"free"}"#
                ),
                ("email-\(email)", "EmailClaimed", #"{"email":"\#(email)","userId":"\#(user)"}"#),
            ])
            if users % 2 == 0 {
                let moved = "moved\(users)@old.example"
                command([
                    ("user-\(user)", "UserProfileUpdated", #"{"userId":"\#(user)","email":"\#(moved)"}"#),
                    ("email-\(moved)", "EmailClaimed", #"{"email":"\#(moved)","userId":"\#(user)"}"#),
                    ("email-\(email)", "EmailReleased", #"{"email":"\#(email)","userId":"\#(user)"}"#),
                ])
            } else {
                stock -= 1
                command([
                    (
                        "product-p1", "ProductPurchased",
                        #"{"productId":"p1","orderId":"o\#(users)","userId":"\#(user)","quantity":1,"stock":\#(stock)}"#
                    ),
                    (
                        "order-o\(users)", "OrderPlaced",
                        #"{"orderId":"o\#(users)","userId":"\#(user)","productId":"p1","quantity":1,"unitPrice":"2.50","totalPrice":"2.50","status":"pending"}"#
                    ),
                ])
            }
            if users % 500 == 0 {
                let commandId = id()
                batch.append(
                    AppendRequest(
                        metadata: EventMetadata(commandId: commandId, correlationId: commandId, causationId: commandId),
                        events: [], expectations: [:],
                        answer: #"{"ok":false,"error":{"code":"email_taken","message":"taken"}}"#))
                answered.append(commandId)
            }
            users += 1
            if batch.count >= 1_000 { try flush() }
        }
        try flush()
        return (users, answered)
    }

    @Test(
        "a log of 100,000 events: same positions, ids and non-personal data, sealed, claims on buckets, same read models"
    )
    func migratesAnOldLog() async throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("old").path
        try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
        let (users, answered) = try Self.writeOldLog(at: source + "/events.sqlite3", events: 100_000)
        let destination = directory.appendingPathComponent("new").path

        let migrated = try await runLogbook(["migrate", source, destination])
        #expect(migrated.status == 0, "\(migrated.stdout) \(migrated.stderr)")
        let summary = try migrated.json()
        let old = try SQLiteEventStore(path: source + "/events.sqlite3")
        let head = try old.headPosition()
        #expect(head >= 100_000)
        #expect(summary["events"] == .int(Int(head)) && summary["head"] == .int(Int(head)))
        #expect(summary["answers"] == .int(answered.count))
        #expect(try migrated.json()["masterKey"] == .string(destination + "/master.key"))

        // Read through a vault, the new log is the old one: positions, ids, types, metadata,
        // times and payloads; only the claims' streams (and their versions) changed.
        let vault = try PersonalDataVault(
            master: try MasterKey.read(path: destination + "/master.key"),
            keyStore: try SQLitePersonKeyStore(path: destination + "/keys.sqlite3"))
        let new = ProtectedEventStore(try SQLiteEventStore(path: destination + "/events.sqlite3"), vault: vault)
        #expect(try new.headPosition() == head)
        let before = try old.read(fromPosition: 1, limit: Int(head), categories: nil)
        let after = try new.read(fromPosition: 1, limit: Int(head), categories: nil)
        #expect(after.count == before.count)
        var mismatches = 0
        for (was, now) in zip(before, after) {
            let same =
                was.position == now.position && was.eventId == now.eventId && was.type == now.type
                && was.data == now.data && was.metadata == now.metadata && was.recordedAt == now.recordedAt
                && (was.category == "email"
                    ? now.stream.hasPrefix("email-") && !now.stream.contains("@") : was.stream == now.stream)
            if !same { mismatches += 1 }
        }
        #expect(mismatches == 0)
        for id in answered {
            #expect(try new.commandRecord(id) == old.commandRecord(id), "the answer of \(id)")
        }
        // Sealed: no address or name of the old log is in the new log's file, in clear.
        let file = try Data(contentsOf: URL(fileURLWithPath: destination + "/events.sqlite3"))
        for index in [0, 1, users / 2, users - 1] {
            #expect(file.range(of: Data("person\(index)@old.example".utf8)) == nil)
            #expect(file.range(of: Data("Person \(index)\"".utf8)) == nil)
        }
        // The same read models: every row change a rebuild makes, from either log.
        #expect(try Projector.changes(after[...]) == Projector.changes(before[...]))
        // And logbook verify accepts the new log (each address held by one live user).
        let verify = try await runLogbook(["verify", "--data-dir", destination])
        #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")

        // A destination that exists, or a source that seals already, is refused.
        let again = try await runLogbook(["migrate", source, destination])
        #expect(again.status == 3 && again.stderr.contains("exists"), "\(again.stderr)")
        let sealed = try await runLogbook(["migrate", destination, directory.appendingPathComponent("x").path])
        #expect(sealed.status == 3 && sealed.stderr.contains("seals personal data already"), "\(sealed.stderr)")
    }

    /// The test server's URL naming `database`.
    private static func url(_ database: PostgresTestDatabase) throws -> String {
        let server = try #require(PostgresTestServer.url)
        var components = try #require(URLComponents(string: server))
        components.path = "/" + database.name
        return try #require(components.string)
    }

    @Test(
        "a PostgreSQL log into an empty PostgreSQL database: same log through the vault, nothing in clear, same read models",
        .enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.skipReason)))
    func migratesAPostgresLog() async throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sourceDatabase = try PostgresTestDatabase()
        let destinationDatabase = try PostgresTestDatabase()
        let (source, destination) = (try Self.url(sourceDatabase), try Self.url(destinationDatabase))
        let old = try PostgresEventStore(connectionString: source, evolution: EventEvolution([]))
        let (users, answered) = try Self.writeOldLog(into: old, events: 5_000)
        let keyFile = directory.appendingPathComponent("master.key").path

        let unkeyed = try await runLogbook(["migrate", source, destination])
        #expect(unkeyed.status == 2 && unkeyed.stderr.contains("--master-key"), "\(unkeyed.stderr)")
        let migrated = try await runLogbook(["migrate", source, destination, "--master-key", keyFile])
        #expect(migrated.status == 0, "\(migrated.stdout) \(migrated.stderr)")
        let head = try old.headPosition()
        #expect(try migrated.json()["head"] == .int(Int(head)))
        #expect(try migrated.json()["answers"] == .int(answered.count))

        let vault = try PersonalDataVault(
            master: try MasterKey.read(path: keyFile), keyStore: try PostgresPersonKeyStore(url: destination))
        let new = ProtectedEventStore(try PostgresEventStore(connectionString: destination), vault: vault)
        let before = try old.read(fromPosition: 1, limit: Int(head), categories: nil)
        let after = try new.read(fromPosition: 1, limit: Int(head), categories: nil)
        #expect(after.map(\.eventId) == before.map(\.eventId))
        #expect(after.map(\.data) == before.map(\.data))
        #expect(after.map(\.position) == before.map(\.position))
        #expect(!after.contains { $0.stream.contains("@") })
        for id in answered {
            #expect(try new.commandRecord(id) == old.commandRecord(id), "the answer of \(id)")
        }
        #expect(try Projector.changes(after[...]) == Projector.changes(before[...]))
        // In the destination database itself, no address or name is in clear.
        let raw = try RawPostgres(destinationDatabase.connectionString)
        for index in [0, users / 2, users - 1] {
            #expect(
                try raw.run(
                    "SELECT count(*) FROM events WHERE data LIKE '%person\(index)@old.example%' "
                        + "OR data LIKE '%Person \(index)\"%' OR stream LIKE '%@%'") == [["0"]])
        }

        // A destination holding a log, or a source that seals already, is refused.
        let again = try await runLogbook(["migrate", source, destination, "--master-key", keyFile])
        #expect(again.status == 3 && again.stderr.contains("not empty"), "\(again.stderr)")
        let sealed = try await runLogbook([
            "migrate", destination, directory.appendingPathComponent("x").path, "--master-key", keyFile,
        ])
        #expect(sealed.status == 3 && sealed.stderr.contains("seals personal data already"), "\(sealed.stderr)")
    }
}
