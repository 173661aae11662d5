import Foundation
import Testing

/// A metrics endpoint's text as a real HTTP client (curl) fetched it, and its samples.
struct Scrape {
    let text: String

    /// `GET http://ADDRESS/metrics` with curl, on a thread of its own.
    static func of(_ address: String) async throws -> Scrape {
        let result = try await runTool(
            "/usr/bin/curl", ["-sS", "--fail", "--max-time", "20", "http://\(address)/metrics"])
        try #require(result.status == 0, "curl \(address): \(result.stderr)")
        return Scrape(text: result.stdout)
    }

    /// The value of the sample written exactly as `series` (`name` or `name{label="v",…}`).
    func value(_ series: String) -> Double? {
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), line[..<space] == series else { continue }
            return Double(line[line.index(after: space)...])
        }
        return nil
    }

    /// `promtool check metrics` on this text: its exit status and everything it printed.
    func promtool() async throws -> (status: Int32, output: String) {
        let result = try await runTool("/usr/bin/promtool", ["check", "metrics"], stdin: text)
        return (result.status, result.stdout + result.stderr)
    }
}

/// Runs a tool (not `logbook`) to its end off the cooperative pool, as `runLogbook` runs `logbook`.
func runTool(_ path: String, _ arguments: [String], stdin: String? = nil) async throws -> CLIResult {
    try await runLogbook(arguments, stdin: stdin, executable: URL(fileURLWithPath: path))
}
