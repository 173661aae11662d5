import Foundation
import LogbookJSON
import Testing

/// Runs the real `logbook` binary that this build produced, in a data directory of its own.
struct LogbookProcess {
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String

        /// The single JSON document printed on stdout.
        func json() throws -> JSONObject {
            try #require(try JSONParser.parse(stdout.trimmingCharacters(in: .whitespacesAndNewlines)).objectValue)
        }

        /// One JSON document per stdout line.
        func jsonLines() throws -> [JSONObject] {
            try stdout.split(separator: "\n").map { line in try #require(try JSONParser.parse(String(line)).objectValue)
            }
        }
    }

    let dataDirectory: URL

    init() throws {
        dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "logbook-cli-\(UUID().uuidString)")
    }

    func removeData() { try? FileManager.default.removeItem(at: dataDirectory) }

    /// The binary next to the test bundle (`swift build` puts both in one folder), or `LOGBOOK_BINARY`.
    static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["LOGBOOK_BINARY"] { return URL(fileURLWithPath: path) }
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        return bundle.appendingPathComponent("logbook")
    }

    /// Runs `logbook ARGS` with `--data-dir` set through the environment, feeding `stdin`.
    func run(_ arguments: [String], stdin: String? = nil, environment extra: [String: String] = [:]) throws -> Result {
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["LOGBOOK_DATA_DIR"] = dataDirectory.path
        environment.merge(extra) { $1 }
        process.environment = environment
        let out = Pipe()
        let err = Pipe()
        let input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self))
    }
}
