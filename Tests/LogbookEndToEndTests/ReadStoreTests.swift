import Foundation
import LogbookTestSupport
import Testing

/// `run feed --read-store`: a feed process reading the log from a streaming replica serves
/// what the replica holds, and nothing that no synchronous standby of the primary holds yet.
@Suite(
    "A feed process reading a replica",
    .enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.skipReason)))
struct ReadStoreTests {
    @Test("serves the replica's log, but not a commit the primary's synchronous standbys lack")
    func feedReadsTheReplicaFenced() async throws {
        let pair = try await offThePool { try PostgresPair() }
        let folder = try ProcessFolder()
        let ports = try FreePorts.take(5).map { "tcp://127.0.0.1:\($0)" }
        let (commands, workerLog, hints, feed, feedLog) = (ports[0], ports[1], ports[2], ports[3], ports[4])
        let worker = try folder.start(
            "worker",
            ["run", "worker", "--store", pair.url, "--commands", commands, "--log", workerLog, "--hints", hints])
        #expect(await worker.started("worker started"), "\(worker.log)")
        // The feed process opens the replica once it has replayed the log's schema, which the worker made.
        let replica = pair.admin(pair.standbyPort, database: "logbook")
        let schema = await eventually {
            (try? await offThePool { try RawPostgres(replica).run("SELECT count(*) FROM logbook_schema") }) == [["1"]]
        }
        #expect(schema, "the replica has the log's schema")
        let feedProcess = try folder.start(
            "feed",
            [
                "run", "feed", "--store", pair.url, "--read-store", replica, "--feed", feed, "--log", feedLog,
                "--hints", hints,
            ])
        #expect(await feedProcess.started("feed started"), "\(feedProcess.log)")

        let product = #"{"productId":"p1","name":"Tea","price":"2.50","category":"food","stock":3}"#
        let first = try await runLogbook(["send", "AddProduct", product, "--id", "c1", "--commands", commands])
        #expect(first.status == 0, "\(first.stdout) \(first.stderr)")
        let replay = ["replay", "--log", feedLog, "--attempts", "1", "--timeout-ms", "10000"]
        let replayed = await eventuallyReplays(replay, events: 1)
        #expect(replayed, "the feed process serves what the replica holds: \(feedProcess.log)")

        // The replica stops being the synchronous standby: it still streams, asynchronously.
        let primary = pair.admin(pair.primaryPort)
        try await RawPostgres.configure(primary, "ALTER SYSTEM SET synchronous_standby_names = 'elsewhere'")
        // The worker's append waits for a standby that never answers, is cancelled after its
        // patience and answered unavailable; its commit is on the primary, and on the replica.
        let restock = #"{"productId":"p1","quantity":2}"#
        let second = try await runLogbook([
            "send", "RestockProduct", restock, "--id", "c2", "--commands", commands, "--attempts", "1",
            "--timeout-ms", "60000",
        ])
        #expect(
            second.status != 0 && second.stdout.contains(#""code":"unavailable""#), "\(second.stdout) \(second.stderr)")
        let onReplica = try await RawPostgres.rows(replica, "SELECT count(*) FROM events", once: [["2"]])
        #expect(onReplica == [["2"]], "the replica shows the commit no synchronous standby has")
        let refused = try await runLogbook(replay)
        #expect(!refused.stdout.contains("\"position\":2"), "never served: \(refused.stdout)")
        #expect(refused.status != 0 && refused.stderr.contains("unavailable"), "\(refused.stderr)")

        // Synchronous again, the replica's log is safe, and served.
        try await RawPostgres.configure(primary, "ALTER SYSTEM RESET synchronous_standby_names")
        #expect(await eventuallyReplays(replay, events: 2), "\(feedProcess.log)")
        #expect(worker.isRunning && feedProcess.isRunning)
    }

    /// Whether `replay` comes to print `events` events (one JSON line each), asked again
    /// until it does, bounded by `patience`.
    private func eventuallyReplays(_ replay: [String], events: Int) async -> Bool {
        await eventually {
            guard let result = try? await runLogbook(replay), result.status == 0 else { return false }
            return result.stdout.split(separator: "\n").count == events
        }
    }
}
