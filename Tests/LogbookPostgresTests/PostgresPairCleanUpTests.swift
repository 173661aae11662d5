import Foundation
import LogbookTestSupport
import Testing

/// The test pairs of PostgreSQL servers (`scripts/test-postgres-pair.sh`) never outlive the
/// process that owns them, even one that ends without its clean-up (a crashed test process).
@Suite(
    "PostgreSQL test pairs end with their owner",
    .enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresPairCleanUpTests {
    /// A process of its own (`sleep`, no child of this one), and its id.
    private static func startOwner() throws -> Int32 {
        guard let pipe = popen("sleep 600 </dev/null >/dev/null 2>&1 & echo $!", "r") else {
            throw PostgresTestError("cannot start sleep")
        }
        var line = [CChar](repeating: 0, count: 32)
        let read = fgets(&line, Int32(line.count), pipe)
        pclose(pipe)
        let text = read.map { String(cString: $0).trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
        guard let pid = Int32(text), pid > 0 else { throw PostgresTestError("sleep's id: \(text)") }
        return pid
    }

    /// Whether a server accepts connections on the loopback `port`.
    private static func accepts(_ port: String) -> Bool {
        (try? RawPostgres("postgresql://postgres@127.0.0.1:\(port)/postgres?connect_timeout=5").run("SELECT 1"))
            != nil
    }

    @Test("a pair whose owner ends without removing it is stopped and removed")
    func pairEndsWithItsOwner() async throws {
        let owner = try Self.startOwner()
        let pair = try await offThePool { try PostgresPair(owner: owner) }
        #expect(Self.accepts(pair.primaryPort) && Self.accepts(pair.standbyPort))
        // The owner lives on while it is not killed: the pair stays.
        #expect(FileManager.default.fileExists(atPath: pair.directory))
        kill(owner, SIGKILL)
        // The script looks for its owner about once a second; wait a bounded number of tries.
        let gone = try await offThePool { () -> Bool in
            for _ in 0..<600 {
                if !FileManager.default.fileExists(atPath: pair.directory) { return true }
                usleep(100_000)
            }
            return false
        }
        #expect(gone, "the pair at \(pair.directory) is still there after its owner was killed")
        #expect(!Self.accepts(pair.primaryPort) && !Self.accepts(pair.standbyPort))
    }
}
