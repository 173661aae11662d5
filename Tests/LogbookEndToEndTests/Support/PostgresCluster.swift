import Foundation
import Glibc
import LogbookCrypto
import LogbookTestSupport
import Testing

/// Real `logbook run worker` (two), `run feed` and `run query` processes on one fresh
/// PostgreSQL database, on free loopback ports, each logging to a file in one temporary
/// folder. The workers hint the feed; the query process follows the feed.
final class PostgresCluster: @unchecked Sendable {
    let database: PostgresTestDatabase
    /// The database as a `postgresql://` URL, as `--store` takes it.
    let url: String
    let directory: URL
    /// Each worker's commands and log endpoints.
    let workers: [(commands: String, log: String)]
    let feed: String
    let feedLog: String
    let hints: String
    let queries: String
    let groups: String
    /// The master key every process of the cluster is given (`LOGBOOK_MASTER_KEY`): processes
    /// sharing one PostgreSQL log share one key store, sealed under one master key.
    let masterKey: String
    // Only touched by the test that owns the cluster, one call at a time.
    private var processes: [String: Process] = [:]

    init() throws {
        database = try PostgresTestDatabase()
        url = try Self.url(of: database)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("logbook-pg-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let ports = try FreePorts.take(9).map { "tcp://127.0.0.1:\($0)" }
        workers = [(ports[0], ports[1]), (ports[2], ports[3])]
        feed = ports[4]
        feedLog = ports[5]
        hints = ports[6]
        queries = ports[7]
        groups = ports[8]
        masterKey = directory.appendingPathComponent("master.key").path
        try MasterKey.generate().write(to: masterKey)
    }

    deinit {
        for process in processes.values where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// The test server's URL with this database's name.
    static func url(of database: PostgresTestDatabase) throws -> String {
        let server = try #require(PostgresTestServer.url)
        var components = try #require(URLComponents(string: server))
        components.path = "/" + database.name
        return try #require(components.string)
    }

    /// Starts the feed process, both workers and the query process, each once it said it started.
    static func started() async throws -> PostgresCluster {
        let cluster = try PostgresCluster()
        try await cluster.startFeed()
        for index in cluster.workers.indices { try await cluster.startWorker(index) }
        try await cluster.start(
            "query",
            [
                "run", "query", "--data-dir", cluster.directory.appendingPathComponent("query").path, "--queries",
                cluster.queries, "--feed", cluster.feed, "--log", cluster.feedLog,
            ],
            startedLine: "query process started")
        return cluster
    }

    func startFeed(environment: [String: String] = [:]) async throws {
        try await start(
            "feed",
            ["run", "feed", "--store", url, "--feed", feed, "--log", feedLog, "--hints", hints],
            startedLine: "feed started", environment: environment)
    }

    /// A groups process keeping its groups in the database, following the feed process.
    func startGroups() async throws {
        try await start(
            "groups",
            [
                "run", "groups", "--store", url, "--data-dir", directory.appendingPathComponent("groups").path,
                "--groups", groups, "--feed", feed, "--log", feedLog,
            ],
            startedLine: "groups process started")
    }

    /// Sends `signal` to the process called `name` and waits for it to end; returns its exit status.
    func stop(_ name: String, _ signal: Int32 = SIGTERM) -> Int32 {
        guard let process = processes.removeValue(forKey: name) else { return -1 }
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        return process.terminationStatus
    }

    func startWorker(_ index: Int) async throws {
        try await start(
            "worker-\(index)",
            [
                "run", "worker", "--store", url, "--commands", workers[index].commands, "--log", workers[index].log,
                "--hints", hints,
            ],
            startedLine: "worker started")
    }

    /// Whether the process called `name` still runs.
    func isRunning(_ name: String) -> Bool { processes[name]?.isRunning == true }

    /// What the process called `name` wrote to stderr so far.
    func stderr(of name: String) -> String {
        (try? String(contentsOf: directory.appendingPathComponent("\(name).log"), encoding: .utf8)) ?? ""
    }

    /// `logbook send TYPE DATA` to worker `index`, once (no retry), with the command id `id`.
    func send(_ index: Int, _ type: String, _ data: String, id: String) async throws -> CLIResult {
        try await runLogbook(
            ["send", type, data, "--id", id, "--commands", workers[index].commands, "--attempts", "1"])
    }

    private func start(
        _ name: String, _ arguments: [String], startedLine: String, environment: [String: String] = [:]
    ) async throws {
        let process = Process()
        process.executableURL = ServiceCluster.binary
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.filter {
            !$0.key.hasPrefix("LOGBOOK_") && !["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"].contains($0.key)
        }.merging(["LOGBOOK_MASTER_KEY": masterKey]) { $1 }.merging(environment) { $1 }
        let logURL = directory.appendingPathComponent("\(name).log")
        _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: logURL)
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        processes[name] = process
        let started = await eventually(within: patience) {
            !process.isRunning || self.stderr(of: name).contains("msg=\"\(startedLine)\"")
        }
        guard started, process.isRunning else {
            Issue.record("\(name) did not start: \(stderr(of: name))")
            throw ClusterError.notAnswering(name)
        }
    }
}
