import Foundation
import LogbookTestSupport
import Testing

/// `run --store-wait`: a worker started while no PostgreSQL host accepts writes (a failover
/// under way) waits for one instead of exiting, and gives up with exit status 3 once the
/// time is spent.
@Suite(
    "run waits for a PostgreSQL store it cannot reach yet",
    .enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.skipReason)))
struct StoreWaitTests {
    @Test("a worker started while no host accepts writes waits, says why, and serves once a primary is there")
    func workerWaitsForAPrimary() async throws {
        let pair = try await offThePool { try PostgresPair() }
        let folder = try ProcessFolder()
        let ports = try FreePorts.take(3).map { "tcp://127.0.0.1:\($0)" }
        // Only the standby, which refuses writes until it is promoted.
        let worker = try folder.start(
            "worker",
            [
                "run", "worker", "--store", pair.url(ports: [pair.standbyPort]), "--store-wait", "600",
                "--commands", ports[0], "--log", ports[1], "--hints", ports[2],
            ])
        let log = { @Sendable in worker.log }

        // Two failed tries, each said, and still running.
        let waited = await eventually { log().components(separatedBy: "waiting for the event log").count > 2 }
        #expect(waited, "the worker should say it waits: \(log())")
        #expect(worker.isRunning, "the worker should wait, not exit: \(log())")
        #expect(!log().contains("worker started"))
        #expect(log().contains("reason="), "the reason is given: \(log())")

        try await offThePool { try pair.run("promote-standby") }
        #expect(await worker.started("worker started"), "the worker should start once a primary is there: \(log())")
        let sent = try await runLogbook([
            "send", "AddProduct", #"{"productId":"p1","name":"Tea","price":"2.50","category":"food","stock":3}"#,
            "--commands", ports[0],
        ])
        #expect(sent.status == 0, "\(sent.stdout) \(sent.stderr)")
        let promoted = pair.admin(pair.standbyPort, database: "logbook")
        #expect(try await RawPostgres.rows(promoted, "SELECT count(*) FROM events") == [["1"]])
        #expect(worker.isRunning, "\(log())")
    }

    @Test("with the wait spent, run stops with exit status 3 after saying why it waited")
    func waitRunsOut() async throws {
        let nobody = try FreePorts.take(1)[0]
        let ports = try FreePorts.take(3).map { "tcp://127.0.0.1:\($0)" }
        let result = try await runLogbook([
            "run", "worker", "--store", "postgresql://logbook:sesame@127.0.0.1:\(nobody)/logbook", "--store-wait", "1",
            "--commands", ports[0], "--log", ports[1], "--hints", ports[2],
        ])
        #expect(result.status == 3, "\(result.stderr)")
        #expect(result.stderr.contains("waiting for the event log"), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").last?.contains("unavailable") == true, "\(result.stderr)")
        #expect(!result.stderr.contains("sesame"), "the password is never printed")

        let refused = try await runLogbook(["run", "worker", "--store-wait", "-1"])
        #expect(refused.status == 2 && refused.stderr.contains("--store-wait"), "\(refused.stderr)")
    }
}
