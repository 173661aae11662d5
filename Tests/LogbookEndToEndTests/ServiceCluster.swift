import Foundation
import Glibc
import LogbookApplication
import LogbookClient
import LogbookJSON
import LogbookZMQ
import Synchronization
import Testing

/// Real `logbook run worker` and `logbook run query` processes on free loopback ports, each
/// with its own data directory under one temporary folder, for end-to-end tests. Processes
/// can be stopped (SIGTERM), killed (SIGKILL) and started again on the same files.
final class ServiceCluster: @unchecked Sendable {
    let directory: URL
    let commands: String
    let feed: String
    let queries: String
    let log: String
    let groups: String
    private var worker: Process?
    private var query: Process?
    private var groupsProcess: Process?
    /// Further workers on the worker's data directory (`PeerWorker`), by commands endpoint.
    var peers: [String: Process] = [:]
    /// Extra flags for `run worker` and `run query` (CURVE settings), and the keys of this
    /// cluster's own clients (`client()`, readiness checks); none: plain.
    var workerFlags: [String] = []
    var queryFlags: [String] = []
    var clientKeys: CurveClientKeys?

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("logbook-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let ports = try FreePorts.take(5)
        commands = "tcp://127.0.0.1:\(ports[0])"
        feed = "tcp://127.0.0.1:\(ports[1])"
        queries = "tcp://127.0.0.1:\(ports[2])"
        log = "tcp://127.0.0.1:\(ports[3])"
        groups = "tcp://127.0.0.1:\(ports[4])"
    }

    deinit {
        for process in [worker, query, groupsProcess].compactMap({ $0 }) + peers.values where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Starts both processes and waits until each answers `Status`.
    static func started() async throws -> ServiceCluster {
        let cluster = try ServiceCluster()
        try await cluster.startWorker()
        try await cluster.startQuery()
        return cluster
    }

    var endpoints: ClientEndpoints {
        ClientEndpoints(commands: commands, feed: feed, queries: queries, log: log, groups: groups)
    }

    var settings: [String] {
        ["--commands", commands, "--feed", feed, "--queries", queries, "--log", log, "--groups", groups]
    }

    func client(timeout: Duration = .seconds(5), attempts: Int = 3) throws -> LogbookClient {
        try LogbookClient(endpoints: endpoints, timeout: timeout, attempts: attempts, security: clientKeys)
    }

    /// A client for requests that may wait (a query for its `minPosition`): one attempt, which
    /// outlasts the longest wait a query may ask for (`patientQueryMilliseconds`).
    func patientClient() throws -> LogbookClient {
        try client(timeout: .milliseconds(patientQueryMilliseconds) + .seconds(30), attempts: 1)
    }

    func startWorker(environment: [String: String] = [:]) async throws {
        let starts = startLines(of: "worker")
        let process = try launch(
            ["run", "worker", "--data-dir", directory.appendingPathComponent("worker").path] + workerFlags, "worker",
            environment: environment)
        worker = process
        try await waitUntilAnswering(.commands, process, role: "worker", after: starts)
    }

    func startQuery(environment: [String: String] = [:]) async throws {
        let starts = startLines(of: "query")
        let process = try launch(
            ["run", "query", "--data-dir", directory.appendingPathComponent("query").path] + queryFlags, "query",
            environment: environment)
        query = process
        try await waitUntilAnswering(.queries, process, role: "query", after: starts)
    }

    /// Starts a groups process (`run groups`) on its own data directory and waits until it
    /// answers `Status`.
    func startGroups(_ extra: [String] = []) async throws {
        let starts = startLines(of: "groups")
        let process = try launch(
            ["run", "groups", "--data-dir", directory.appendingPathComponent("groups").path] + extra, "groups")
        groupsProcess = process
        try await waitUntilAnswering(.groups, process, role: "groups", after: starts)
    }

    @discardableResult
    func stopGroups(_ signal: Int32 = SIGTERM) -> Int32 { stop(&groupsProcess, signal) }

    /// How many times a process of `role` logged that it started (its log file is kept across restarts).
    func startLines(of role: String) -> Int {
        let line =
            role.hasPrefix("worker")
            ? "msg=\"worker started\""
            : role == "groups" ? "msg=\"groups process started\"" : "msg=\"query process started\""
        return stderr(of: role).components(separatedBy: line).count - 1
    }

    /// Sends `signal` to the worker and waits for it to end; returns its exit status.
    @discardableResult
    func stopWorker(_ signal: Int32 = SIGTERM) -> Int32 { stop(&worker, signal) }

    @discardableResult
    func stopQuery(_ signal: Int32 = SIGTERM) -> Int32 { stop(&query, signal) }

    /// Sends `signal` to the running worker (SIGHUP: read the allow-list again).
    func signalWorker(_ signal: Int32) {
        if let worker { kill(worker.processIdentifier, signal) }
    }

    /// The running query process's id, if one runs.
    var queryProcessIdentifier: pid_t? { query?.processIdentifier }

    /// The path of the worker's event log.
    var eventLogPath: String { directory.appendingPathComponent("worker/events.sqlite3").path }

    /// What a process wrote to stderr so far.
    func stderr(of role: String) -> String {
        (try? String(contentsOf: directory.appendingPathComponent("\(role).log"), encoding: .utf8)) ?? ""
    }

    private func stop(_ process: inout Process?, _ signal: Int32) -> Int32 {
        guard let running = process else { return -1 }
        kill(running.processIdentifier, signal)
        running.waitUntilExit()
        process = nil
        return running.terminationStatus
    }

    /// Starts `logbook ARGUMENTS` with this cluster's settings (or `settings`), its stderr
    /// appended to `ROLE.log`, in this test process's environment without systemd's
    /// notification variables, plus `environment`.
    func launch(
        _ arguments: [String], _ role: String, settings: [String]? = nil, environment: [String: String] = [:]
    ) throws -> Process {
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = arguments + (settings ?? self.settings)
        var inherited = ProcessInfo.processInfo.environment
        for name in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"] { inherited[name] = nil }
        process.environment = inherited.merging(environment) { $1 }
        let logURL = directory.appendingPathComponent("\(role).log")
        if !FileManager.default.fileExists(atPath: logURL.path) {
            _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        }
        let handle = try FileHandle(forWritingTo: logURL)
        handle.seekToEndOfFile()
        process.standardError = handle
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Waits until the process just launched says it started and its server answers `Status`.
    /// Fails at once if the process ended (a port taken by someone else, say): whatever
    /// answers on its port then is not this cluster's process.
    func waitUntilAnswering(
        _ server: ServerEndpoint, _ process: Process, role: String, after starts: Int,
        at endpoints: ClientEndpoints? = nil
    ) async throws {
        let deadline = ContinuousClock.now + patience
        while startLines(of: role) == starts, process.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        if startLines(of: role) > starts,
            await answersStatus(self, server, at: endpoints, stillWorthIt: { process.isRunning })
        {
            return
        }
        guard process.isRunning else {
            Issue.record("the \(role) process ended at start: \(stderr(of: role))")
            throw ClusterError.notAnswering(server.rawValue)
        }
        Issue.record(
            "the \(server) server did not answer in time; stderr: \(stderr(of: role)) \(stderr(of: "query"))")
        throw ClusterError.notAnswering(server.rawValue)
    }

    /// The binary next to the test bundle (`swift build` puts both in one folder), or `LOGBOOK_BINARY`.
    static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["LOGBOOK_BINARY"] { return URL(fileURLWithPath: path) }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
            "logbook")
    }
}

enum ClusterError: Error {
    case notAnswering(String)
}

/// What a `logbook` command printed and returned.
struct CLIResult {
    let status: Int32
    let stdout: String
    let stderr: String

    func json() throws -> JSONObject {
        try #require(try JSONParser.parse(stdout.trimmingCharacters(in: .whitespacesAndNewlines)).objectValue)
    }

    func jsonLines() throws -> [JSONObject] {
        try stdout.split(separator: "\n").map { line in try #require(try JSONParser.parse(String(line)).objectValue) }
    }
}

/// Loopback ports nobody listens on, for the processes the tests start.
///
/// They are drawn below the kernel's range of ephemeral ports, never from it: a port the
/// kernel picks for port 0 is an ephemeral one, and between handing it out and the process
/// binding it (a while, on a loaded machine) any outgoing connection may take it as its local
/// port, and the bind fails. Ports below that range are never taken that way. A port is
/// handed out once per test process (a counter, started at a place that depends on the
/// process id so that two test processes side by side rarely meet), and only after a bind
/// shows that nothing holds it now.
enum FreePorts {
    /// The ports drawn from: below Linux's default ephemeral range (32768–60999).
    static let range = 20_000..<32_768
    private static let next = Mutex<Int>(Int(getpid()) % (range.count / 2))

    static func take(_ count: Int) throws -> [Int] {
        var ports: [Int] = []
        var tried = 0
        while ports.count < count {
            guard tried < range.count else { throw ClusterError.notAnswering("no free port") }
            tried += 1
            let port = next.withLock { offset in
                defer { offset = (offset + 1) % range.count }
                return range.lowerBound + offset
            }
            if isBindable(port) { ports.append(port) }
        }
        return ports
    }

    /// Whether a socket can bind `port` on loopback now (it is closed again at once).
    private static func isBindable(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var reuse: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
