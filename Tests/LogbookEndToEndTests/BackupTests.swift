import Foundation
import Glibc
import LogbookApplication
import LogbookClient
import LogbookJSON
import LogbookTestSupport
import Testing

/// `logbook backup` against a real worker under load: the copy verifies, holds every command
/// acknowledged before it began, and a worker started on it serves from its head (a query
/// process built from it agrees with it); it never overwrites, and a PostgreSQL log is
/// refused with a pointer to PostgreSQL's tools.
@Suite("End to end: logbook backup", .serialized)
struct BackupTests {
    /// Clients sending commands one after another until told to stop (or released), keeping
    /// every receipt and every failure.
    final class CommandStream: Sendable {
        let receipts = Shared<[CommandReceipt]>([])
        let failures = Shared<[String]>([])
        private let stopped = Shared(false)
        private let tasks: [Task<Void, Never>]

        init(_ cluster: ServiceCluster, senders: Int) throws {
            let clients = try (0..<senders).map { _ in try cluster.client(timeout: .seconds(20), attempts: 1) }
            let (receipts, failures, stopped) = (self.receipts, self.failures, self.stopped)
            tasks = clients.enumerated().map { sender, client in
                Task {
                    defer { client.close() }
                    var index = 0
                    while !stopped.value {
                        index += 1
                        let id = "s\(sender)-\(index)"
                        do {
                            let receipt =
                                index % 2 == 0
                                ? try await client.send(type: "RegisterUser", data: Fixture.user(id))
                                : try await client.send(type: "AddProduct", data: Fixture.product(id))
                            receipts.update { $0.append(receipt) }
                        } catch {
                            failures.update { $0.append("\(id): \(error)") }
                            try? await Task.sleep(for: .milliseconds(100))
                        }
                    }
                }
            }
        }

        /// A test that ends early (a failed `#require`) stops the senders all the same.
        deinit { stopped.update { $0 = true } }

        func stop() async {
            stopped.update { $0 = true }
            for task in tasks { await task.value }
        }
    }

    @Test(
        "a backup taken under load verifies, holds every acknowledged command, and a worker on it serves from its head")
    func underLoad() async throws {
        let cluster = try await ServiceCluster.started()
        let stream = try CommandStream(cluster, senders: 3)
        #expect(await eventually(within: patience) { stream.receipts.value.count >= 300 })

        // The copy goes straight into the data directory of a second service.
        let restored = try ServiceCluster()
        let destination = restored.workerDataDirectory
        let acknowledgedBefore = stream.receipts.value
        let backup = try await runLogbook(["backup", destination, "--data-dir", cluster.workerDataDirectory])
        let acknowledgedDuring = stream.receipts.value.count - acknowledgedBefore.count
        #expect(
            await eventually(within: patience) {
                stream.receipts.value.count >= acknowledgedBefore.count + acknowledgedDuring + 50
            })
        await stream.stop()
        #expect(stream.failures.value == [], "the worker kept serving while the backup ran")
        #expect(backup.status == 0, "\(backup.stdout) \(backup.stderr)")
        let summary = try backup.json()
        let head = try #require(summary["head"]?.intValue.map(Int64.init))
        #expect(summary["backup"] == .string(destination))
        #expect(summary["events"] == .int(Int(head)))
        #expect(head >= acknowledgedBefore.map(\.position).max() ?? 0)
        #expect(
            Set(try FileManager.default.contentsOfDirectory(atPath: destination))
                == ["events.sqlite3", "keys.sqlite3", "master.key"])
        #expect(summary["keyStore"] == .string(destination + "/keys.sqlite3"))

        // logbook verify accepts it.
        let verify = try await runLogbook(["verify", "--data-dir", destination])
        #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
        #expect(try verify.json() == ["ok": true, "events": .int(Int(head))])

        // A worker started on it serves from its head, and takes new commands after it.
        try await restored.startWorker()
        let status = try await restored.run(["status", "--timeout-ms", "5000", "--attempts", "1"])
        #expect(try status.json()["worker"]?["head"] == .int(Int(head)))
        let copy = try await restored.wholeLog()
        let original = try await cluster.wholeLog()
        #expect(copy.count == Int(head))
        #expect(copy.map(\.eventId) == original.prefix(Int(head)).map(\.eventId), "the copy is a prefix of the log")
        #expect(
            copy.map(\.data) == original.prefix(Int(head)).map(\.data),
            "the restored worker opens every personal value with the copied key store and master key")
        let inCopy = Set(copy.map(\.eventId))
        let missing = acknowledgedBefore.flatMap(\.events).filter { !inCopy.contains($0.eventId) }
        #expect(missing.isEmpty, "acknowledged before the backup began, missing from it: \(missing.map(\.position))")
        let client = try restored.client()
        defer { client.close() }
        let next = try await client.send(type: "AddProduct", data: Fixture.product("after-restore"))
        #expect(next.events.map(\.position) == [head + 1])

        // A query process built from it agrees with it.
        try await restored.startQuery()
        let queryStatus = try await restored.queryStatus(after: head + 1)
        #expect(queryStatus["checkpoint"] == .int(Int(head + 1)))
        #expect(queryStatus["readModels"] == expectedCounts(try await restored.wholeLog()))
        let someone = try #require(acknowledgedBefore.flatMap(\.events).first { $0.type == "UserRegistered" })
        let userId = JSONValue.string(String(someone.stream.dropFirst("user-".count)))
        #expect(try await client.query(type: "GetUser", data: ["userId": userId]).result["userId"] == userId)
    }

    @Test("backup never overwrites: an existing DEST is refused and left as it was")
    func neverOverwrites() async throws {
        let cluster = try await ServiceCluster.started()
        _ = try await cluster.run([
            "send", "AddProduct", #"{"productId":"p1","name":"Tea","price":"1.00","category":"food","stock":3}"#,
        ])
        let destination = cluster.directory.appendingPathComponent("backups/first").path
        let first = try await runLogbook(["backup", destination, "--data-dir", cluster.workerDataDirectory])
        #expect(first.status == 0, "\(first.stderr)")
        let copy = try Data(contentsOf: URL(fileURLWithPath: destination + "/events.sqlite3"))
        _ = try await cluster.run([
            "send", "AddProduct", #"{"productId":"p2","name":"Jam","price":"2.00","category":"food","stock":3}"#,
        ])

        let again = try await runLogbook(["backup", destination, "--data-dir", cluster.workerDataDirectory])
        #expect(again.status == 3)
        #expect(again.stderr.contains("exists; a backup never overwrites"), "\(again.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: destination + "/events.sqlite3")) == copy)
        // An empty directory in the way is refused too.
        let empty = cluster.directory.appendingPathComponent("backups/empty").path
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        #expect(try await runLogbook(["backup", empty, "--data-dir", cluster.workerDataDirectory]).status == 3)
        #expect(try FileManager.default.contentsOfDirectory(atPath: empty) == [])
        // No log where --data-dir points: nothing is created.
        let nowhere = cluster.directory.appendingPathComponent("backups/nowhere").path
        let noLog = try await runLogbook([
            "backup", nowhere, "--data-dir", cluster.directory.appendingPathComponent("none").path,
        ])
        #expect(noLog.status == 3)
        #expect(!FileManager.default.fileExists(atPath: nowhere))
    }

    @Test(
        "a PostgreSQL log copied with pg_dump and pg_restore, as the README says, serves from its head with its checks",
        .enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.skipReason)))
    func postgresDumpAndRestore() async throws {
        let source = try PostgresCluster()
        try await source.startWorker(0)
        for index in 1...3 {
            let sent = try await source.send(
                0, "RegisterUser", #"{"userId":"u\#(index)","name":"A","email":"a\#(index)@b.co"}"#, id: "c\(index)")
            #expect(sent.status == 0, "\(sent.stdout) \(sent.stderr)")
        }
        let dump = source.directory.appendingPathComponent("logbook.dump").path
        let dumped = try await Self.tool("pg_dump", ["-Fc", "-d", source.url, "-f", dump])
        #expect(dumped.status == 0, "\(dumped.stderr)")
        #expect(source.stop("worker-0") == 0)

        let restored = try PostgresCluster()
        // The key store came with the dump; the master key is kept apart, and given again.
        try FileManager.default.removeItem(atPath: restored.masterKey)
        try FileManager.default.copyItem(atPath: source.masterKey, toPath: restored.masterKey)
        let restore = try await Self.tool("pg_restore", ["-d", restored.url, dump])
        #expect(restore.status == 0, "\(restore.stderr)")
        try await restored.startWorker(0)
        let status = try await runLogbook([
            "status", "--commands", restored.workers[0].commands, "--timeout-ms", "5000", "--attempts", "1",
        ])
        #expect(try status.json()["worker"]?["head"] == 6, "\(status.stdout)")
        let next = try await restored.send(
            0, "RegisterUser", #"{"userId":"u9","name":"A","email":"a9@b.co"}"#, id: "c9")
        #expect(try next.json()["position"] == 8, "\(next.stdout)")
        // The command ids came along: an id recorded before the dump is answered as it was.
        let again = try await restored.send(
            0, "RegisterUser", #"{"userId":"u1","name":"A","email":"a1@b.co"}"#, id: "c1")
        #expect(try again.json()["position"] == 2, "\(again.stdout)")
        #expect(again.stdout.contains(#""name":"A""#), "the restored worker opens the personal values: \(again.stdout)")
        // And the schema's triggers: the restored log is append-only too.
        let edit = RawSQLResult(postgres: restored.url, sql: "UPDATE events SET type = 'x' WHERE position = 1")
        #expect(edit.message.contains("append-only"), "\(edit.message)")
    }

    /// Runs a PostgreSQL client tool (the installed server's, else the one on PATH).
    static func tool(_ name: String, _ arguments: [String]) async throws -> CLIResult {
        let installed = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        let path =
            installed.sorted().reversed().map { "/usr/lib/postgresql/\($0)/bin/\(name)" }
            .first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/usr/bin/\(name)"
        return try await runLogbook(arguments, executable: URL(fileURLWithPath: path))
    }

    @Test("a PostgreSQL log is refused with a pointer to pg_basebackup and pg_dump")
    func postgresRefused() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "logbook-e2e-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("copy").path
        let refused = try await runLogbook([
            "backup", destination, "--store", "postgresql://logbook:secret@127.0.0.1:1/logbook",
        ])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("pg_basebackup") && refused.stderr.contains("pg_dump"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("secret"))
        #expect(!FileManager.default.fileExists(atPath: destination))
    }
}
