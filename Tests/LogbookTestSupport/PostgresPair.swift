import Foundation

/// A PostgreSQL primary with one synchronous standby of a test's own
/// (`scripts/test-postgres-pair.sh`), each on a free loopback port, with a database
/// `logbook` made on the primary; stopped and removed when the object goes, or, should it
/// never go (a test process that crashed), once its owner process has ended.
public final class PostgresPair: Sendable {
    public let directory: String
    public let primaryPort: String
    public let standbyPort: String

    /// A new pair, removed by the script once the process `owner` (this one unless given) has ended.
    public init(owner: Int32? = nil) throws {
        let owner = owner ?? ProcessInfo.processInfo.processIdentifier
        let words = try Self.script(["start", String(owner)]).split(separator: " ").map(String.init)
        guard words.count == 3 else { throw PostgresTestError("test-postgres-pair.sh start printed \(words)") }
        (directory, primaryPort, standbyPort) = (words[0], words[1], words[2])
        try RawPostgres(admin(primaryPort)).run("CREATE DATABASE logbook")
    }

    deinit { _ = try? Self.script(["remove", directory]) }

    /// One of the script's actions on this pair: `stop-standby`, `start-standby`,
    /// `kill-primary`, `promote-standby`.
    public func run(_ action: String) throws { _ = try Self.script([action, directory]) }

    /// The log's database on either server, whichever is the primary now.
    public var url: String { url(ports: [primaryPort, standbyPort]) }

    /// The log's database on the servers at `ports`, in that order, the one that accepts writes.
    public func url(ports: [String]) -> String {
        "postgresql://postgres@" + ports.map { "127.0.0.1:\($0)" }.joined(separator: ",") + "/logbook"
            + "?target_session_attrs=read-write&connect_timeout=5"
    }

    /// A superuser's connection string for `database` on the server at `port`.
    public func admin(_ port: String, database: String = "postgres") -> String {
        "postgresql://postgres@127.0.0.1:\(port)/\(database)"
    }

    /// Runs the pair script through `popen` (Foundation's `waitUntilExit` was seen to
    /// spin on a child already gone); answers what it printed, or throws what it said.
    private static func script(_ arguments: [String]) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let command =
            ([root.appendingPathComponent("scripts/test-postgres-pair.sh").path] + arguments)
            .map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ") + " 2>&1"
        guard let pipe = popen(command, "r") else { throw PostgresTestError("cannot run \(command)") }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while true {
            let count = fread(&buffer, 1, buffer.count, pipe)
            guard count > 0 else { break }
            output += buffer[..<count]
        }
        let status = pclose(pipe)
        let text = String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard status == 0 else {
            throw PostgresTestError("test-postgres-pair.sh \(arguments.joined(separator: " ")): \(text)")
        }
        return text
    }
}
