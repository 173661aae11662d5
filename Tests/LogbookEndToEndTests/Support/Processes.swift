import Foundation
import Glibc
import LogbookApplication
import LogbookClient
import LogbookJSON
import LogbookTestSupport
import LogbookZMQ
import Testing

/// How long `runLogbook` lets a command run before it kills it: every command it runs ends
/// on its own within seconds, so one still running is a bug (say, a process that was meant to
/// fail and serves instead), and killing it fails that test instead of hanging the suite.
let runLogbookDeadlineSeconds = 120

/// Runs the `logbook` binary (or `executable`) to its end on a thread of its own (not the
/// cooperative pool), feeding `stdin`, and returns what it printed and its exit status
/// (killed, with a line saying so on stderr, after `runLogbookDeadlineSeconds`).
func runLogbook(
    _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:],
    executable: URL = ServiceCluster.binary
) async throws -> CLIResult {
    try await offThePool("e2e-cli") {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var merged = ProcessInfo.processInfo.environment
        for key in merged.keys where key.hasPrefix("LOGBOOK_") { merged[key] = nil }
        merged.merge(environment) { $1 }
        process.environment = merged
        let out = Pipe()
        let err = Pipe()
        let input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        let pid = process.processIdentifier
        let overdue = Shared(false)
        let watchdog = DispatchWorkItem {
            overdue.update { $0 = true }
            kill(pid, SIGKILL)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(runLogbookDeadlineSeconds), execute: watchdog)
        defer { watchdog.cancel() }
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        // stderr is read on another thread so a chatty process can never fill one pipe
        // while this thread waits on the other.
        let stderrText = Shared("")
        let reader = OwnedThread(name: "e2e-cli-stderr") {
            let data = err.fileHandleForReading.readDataToEndOfFile()
            stderrText.update { $0 = String(decoding: data, as: UTF8.self) }
        }
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        reader.join()
        process.waitUntilExit()
        watchdog.cancel()
        let note = overdue.value ? "\n(killed: still running after \(runLogbookDeadlineSeconds) s)" : ""
        return CLIResult(
            status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
            stderr: stderrText.value + note)
    }
}

extension ServiceCluster {
    /// `logbook ARGS` against this cluster's endpoints, off the cooperative pool.
    func run(_ arguments: [String], stdin: String? = nil) async throws -> CLIResult {
        try await runLogbook(arguments + settings, stdin: stdin)
    }

    /// The worker's data directory (its event log lives there).
    var workerDataDirectory: String { directory.appendingPathComponent("worker").path }

    /// The query process's data directory.
    var queryDataDirectory: String { directory.appendingPathComponent("query").path }

    /// A `logbook` process against this cluster that keeps running (`subscribe`, `up`).
    func background(_ arguments: [String]) throws -> BackgroundLogbook {
        try BackgroundLogbook(arguments + settings)
    }

    /// The whole log, read page by page through `ReadLog`.
    func wholeLog(pageSize: Int = 1_000, topics: [String]? = nil) async throws -> [RecordedEvent] {
        let client = try self.client()
        defer { client.close() }
        var events: [RecordedEvent] = []
        var next: Int64 = 1
        while true {
            let page = try await client.readLog(from: next, limit: pageSize, topics: topics)
            events += page.events
            if page.next > page.head { return events }
            #expect(page.next > next, "ReadLog must move forward")
            next = page.next
        }
    }

    /// The log's head, as the log socket tells it.
    func head() async throws -> Int64 {
        let client = try self.client()
        defer { client.close() }
        return try await client.readLog(from: 1, limit: 1).head
    }

    /// Waits until the query process has applied `position` (a query with `minPosition`),
    /// then returns its `Status`.
    @discardableResult
    func queryStatus(after position: Int64) async throws -> JSONObject {
        let client = try patientClient()
        defer { client.close() }
        _ = try await client.query(type: "ListUsers", minPosition: position, timeoutMs: patientQueryMilliseconds)
        return try await client.status(of: .queries)
    }

    /// Lines the process wrote to stderr at level error.
    func errorLines(of role: String) -> [Substring] {
        stderr(of: role).split(separator: "\n").filter { $0.contains("level=error") }
    }
}

/// A `logbook` process left running, its stdout collected line by line on a thread of its own.
final class BackgroundLogbook: @unchecked Sendable {
    // `process` is only touched through its thread-safe members (pid, isRunning, waits).
    let process: Process
    private let output: Shared<[UInt8]>
    private let errors: Shared<[UInt8]>
    private let readers: [OwnedThread]

    init(_ arguments: [String]) throws {
        let output = Shared<[UInt8]>([])
        let errors = Shared<[UInt8]>([])
        self.output = output
        self.errors = errors
        process = Process()
        process.executableURL = ServiceCluster.binary
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        for key in environment.keys where key.hasPrefix("LOGBOOK_") { environment[key] = nil }
        process.environment = environment
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        readers = [
            OwnedThread(name: "e2e-bg-stdout") {
                while case let data = out.fileHandleForReading.availableData, !data.isEmpty {
                    output.update { $0 += data }
                }
            },
            OwnedThread(name: "e2e-bg-stderr") {
                while case let data = err.fileHandleForReading.availableData, !data.isEmpty {
                    errors.update { $0 += data }
                }
            },
        ]
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            // Reaped here, not with Foundation's `waitUntilExit`: run from a test's task on
            // Swift's cooperative pool after a failed expectation, that call was seen spinning
            // for good on a process already dead, taking one of the pool's two threads and
            // starving every other test into timeouts.
            var status: Int32 = 0
            while waitpid(process.processIdentifier, &status, 0) == -1 && errno == EINTR {}
        }
    }

    var pid: pid_t { process.processIdentifier }

    /// The complete lines printed so far.
    var lines: [String] {
        let text = String(decoding: output.value, as: UTF8.self)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines.removeLast()  // the part after the last newline: empty, or a line still being written
        return lines
    }

    var stderr: String { String(decoding: errors.value, as: UTF8.self) }

    /// Each complete line as a JSON object.
    func jsonLines() throws -> [JSONObject] {
        try lines.map { line in try #require(try JSONParser.parse(line).objectValue, "\(line)") }
    }

    /// Waits until at least `count` lines were printed; returns whether they were.
    func waitForLines(_ count: Int, within timeout: Duration = patience) async -> Bool {
        await eventually(within: timeout) { self.lines.count >= count }
    }

    /// Waits for the process to end on its own; nil when it is still running after `timeout`
    /// (it is then killed).
    func waitForExit(within timeout: Duration = patience) async -> Int32? {
        if await eventually(within: timeout, { !self.process.isRunning }) {
            process.waitUntilExit()
            for reader in readers { reader.join() }
            return process.terminationStatus
        }
        kill(pid, SIGKILL)
        process.waitUntilExit()
        return nil
    }

    /// Sends `signal` and waits for the process to end.
    func signal(_ signal: Int32, within timeout: Duration = patience) async -> Int32? {
        kill(pid, signal)
        return await waitForExit(within: timeout)
    }
}

/// Whether anything accepts TCP connections on a `tcp://host:port` endpoint.
func isListening(_ endpoint: String) -> Bool {
    guard let port = endpoint.split(separator: ":").last.flatMap({ UInt16($0) }) else { return false }
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = port.bigEndian
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
    }
}

/// A listening TCP socket on a `tcp://127.0.0.1:port` endpoint, so that a process meant to
/// bind it cannot; nil when it could not be taken. Close the descriptor to give the port back.
func takePort(_ endpoint: String) -> Int32? {
    guard let port = endpoint.split(separator: ":").last.flatMap({ UInt16($0) }) else { return nil }
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = port.bigEndian
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 && listen(fd, 8) == 0
        }
    }
    guard bound else {
        close(fd)
        return nil
    }
    return fd
}

/// Whether a process with this id exists (and is not a zombie).
func processExists(_ pid: pid_t) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
    // The state letter follows the parenthesised command name.
    guard let close = stat.lastIndex(of: ")") else { return false }
    let state = stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first
    return state != "Z" && state != "X"
}

/// The ids of the live children of `parent`.
func childProcesses(of parent: pid_t) -> [pid_t] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { name -> pid_t? in
        guard let pid = pid_t(name),
            let stat = try? String(contentsOfFile: "/proc/\(name)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 2, pid_t(fields[1]) == parent, fields[0] != "Z" else { return nil }
        return pid
    }
}
