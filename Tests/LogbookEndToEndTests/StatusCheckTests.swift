import Foundation
import Glibc
import LogbookClient
import LogbookJSON
import LogbookTestSupport
import Testing

/// `logbook status --check`, a health check for scripts and monitors, against real
/// processes: 0 when both answer and the query process keeps up; 1 with one line per
/// failing process when one is down or a query process lags beyond `--max-lag`.
@Suite("End to end: logbook status --check", .serialized)
struct StatusCheckTests {
    /// The lines `--check` wrote about failing processes.
    static func problems(_ result: CLIResult) -> [String] {
        result.stderr.split(separator: "\n").map(String.init).filter { $0.hasPrefix("logbook: error: status check: ") }
    }

    static let quick = ["--check", "--timeout-ms", "1000", "--attempts", "1"]

    @Test("healthy, a query process down, a worker down: exit status and one line per failing process")
    func upAndDown() async throws {
        let cluster = try await ServiceCluster.started()
        _ = try await cluster.run(["send", "RegisterUser", #"{"userId":"u1","name":"Ann","email":"a@b.co"}"#])
        try await cluster.queryStatus(after: try await cluster.head())

        let healthy = try await cluster.run(["status"] + Self.quick)
        #expect(healthy.status == 0, "\(healthy.stdout) \(healthy.stderr)")
        #expect(Self.problems(healthy) == [])
        #expect(try healthy.json()["worker"]?["head"] == 2)

        #expect(cluster.stopQuery(SIGTERM) == 0)
        let queryDown = try await cluster.run(["status"] + Self.quick)
        #expect(queryDown.status == 1)
        let queryProblems = Self.problems(queryDown)
        #expect(queryProblems.count == 1, "\(queryDown.stderr)")
        #expect(queryProblems.first?.hasPrefix("logbook: error: status check: query \(cluster.queries): down:") == true)

        try await cluster.startQuery()
        #expect(cluster.stopWorker(SIGTERM) == 0)
        let workerDown = try await cluster.run(["status"] + Self.quick)
        #expect(workerDown.status == 1)
        let workerProblems = Self.problems(workerDown)
        #expect(workerProblems.count == 1, "\(workerDown.stderr)")
        #expect(
            workerProblems.first?.hasPrefix("logbook: error: status check: worker \(cluster.commands): down:") == true)

        // Without --check, status keeps its own rule (1: someone did not answer) and says nothing more.
        let plain = try await cluster.run(["status", "--timeout-ms", "1000", "--attempts", "1"])
        #expect(plain.status == 1)
        #expect(Self.problems(plain) == [])
        #expect(try await cluster.run(["status", "--max-lag", "5"]).status == 2)
    }

    @Test(
        "a query process whose read models cannot be written falls behind: exit 1 past --max-lag, 0 once it catches up")
    func lagging() async throws {
        let cluster = try await ServiceCluster.started()
        let client = try cluster.client()
        defer { client.close() }
        _ = try await client.send(type: "AddProduct", data: Fixture.product("p0"))
        try await cluster.queryStatus(after: try await cluster.head())

        // The test holds the read models' write lock: the projection cannot apply what comes.
        let readModels = cluster.directory.appendingPathComponent("query/readmodels-1.sqlite3").path
        let lock = try SQLiteWriteLock(path: readModels)
        for index in 1...5 { _ = try await client.send(type: "AddProduct", data: Fixture.product("p\(index)")) }
        let behind = try await cluster.run(["status", "--max-lag", "3"] + Self.quick)
        #expect(behind.status == 1, "\(behind.stdout) \(behind.stderr)")
        let problems = Self.problems(behind)
        #expect(problems.count == 1, "\(behind.stderr)")
        #expect(
            problems.first?.hasPrefix("logbook: error: status check: query \(cluster.queries): 5 events behind")
                == true,
            "\(problems)")
        #expect(problems.first?.hasSuffix("more than --max-lag 3)") == true, "\(problems)")
        // The same lag is within a larger threshold.
        #expect(try await cluster.run(["status", "--max-lag", "5"] + Self.quick).status == 0)

        lock.release()
        let caughtUp = await eventually(within: patience) {
            (try? await cluster.run(["status", "--max-lag", "0"] + Self.quick).status) == 0
        }
        #expect(caughtUp)
    }
}
