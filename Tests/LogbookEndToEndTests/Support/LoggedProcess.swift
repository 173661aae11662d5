import Foundation
import Glibc
import LogbookCrypto

/// A `logbook` process of a test's own, its stderr written to a file in the test's folder,
/// with none of the caller's `LOGBOOK_` settings but the master key given; killed and
/// reaped when the object goes.
final class LoggedProcess: @unchecked Sendable {
    // Started in `init`, signalled only by `deinit` and `stop`.
    private let process = Process()
    private let logPath: String

    init(_ arguments: [String], logTo logPath: String, masterKey: String) throws {
        self.logPath = logPath
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process.executableURL = ServiceCluster.binary
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LOGBOOK_") }
            .merging(["LOGBOOK_MASTER_KEY": masterKey]) { $1 }
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        process.standardOutput = FileHandle.nullDevice
        try process.run()
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    var isRunning: Bool { process.isRunning }

    /// What the process wrote to stderr so far.
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Waits (bounded by `patience`) until the process logged `message` (its `msg=`), or ended;
    /// returns whether it logged it and still runs.
    func started(_ message: String) async -> Bool {
        let logged = await eventually { !self.isRunning || self.log.contains("msg=\"\(message)\"") }
        return logged && isRunning
    }
}

/// A fresh folder for a test's own `logbook` processes, holding the master key they share;
/// removed when the object goes.
final class ProcessFolder: Sendable {
    let directory: URL
    let masterKey: String

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("logbook-processes-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        masterKey = directory.appendingPathComponent("master.key").path
        try MasterKey.generate().write(to: masterKey)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// Starts `logbook ARGUMENTS`, its stderr in this folder's `NAME.log`.
    func start(_ name: String, _ arguments: [String]) throws -> LoggedProcess {
        try LoggedProcess(
            arguments, logTo: directory.appendingPathComponent("\(name).log").path, masterKey: masterKey)
    }
}
