import Foundation
import Testing

/// The help `logbook` generates from its declarations, and `logbook bench`, which hands
/// over to the `logbook-bench` executable built beside `logbook`.
@Suite("End to end: generated help, and logbook bench forwarding to logbook-bench")
struct BenchCLITests {
    static var benchBinary: URL {
        ServiceCluster.binary.deletingLastPathComponent().appendingPathComponent("logbook-bench")
    }

    @Test("logbook help subscribe lists --timeout-ms and --attempts, and subscribe takes them")
    func subscribeHelp() async throws {
        let help = try await runLogbook(["help", "subscribe"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("--timeout-ms N"), "\(help.stdout)")
        #expect(help.stdout.contains("--attempts N"), "\(help.stdout)")
        // Accepted: the command line is fine, and only the missing server fails it.
        let cluster = try ServiceCluster()
        let result = try await cluster.run(["subscribe", "--from", "1", "--timeout-ms", "200", "--attempts", "1"])
        #expect(result.status == 3, "\(result.stderr)")
    }

    @Test("logbook bench --help and logbook help bench print logbook-bench's help")
    func benchHelpForwards() async throws {
        let own = try await runLogbook(["--help"], executable: Self.benchBinary)
        #expect(own.status == 0)
        #expect(own.stdout.hasPrefix("usage: logbook-bench [options]"), "\(own.stdout)")
        #expect(own.stdout.contains("--quick"))
        #expect(own.stdout.contains("--logbook PATH"))
        for arguments in [["bench", "--help"], ["help", "bench"]] {
            let forwarded = try await runLogbook(arguments)
            #expect(forwarded.status == 0, "\(arguments): \(forwarded.stderr)")
            #expect(forwarded.stdout == own.stdout, "\(arguments)")
        }
    }

    @Test("logbook bench passes its words to logbook-bench, which refuses a bad one with exit 2")
    func benchArgumentsForward() async throws {
        let result = try await runLogbook(["bench", "--window", "0"])
        #expect(result.status == 2)
        #expect(
            result.stderr.hasPrefix("logbook-bench: error: --window must be a whole number from 1 to 10000"),
            "\(result.stderr)")
        let unknown = try await runLogbook(["bench", "--commands", "tcp://127.0.0.1:1"])
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("unknown option --commands"), "\(unknown.stderr)")
    }

    @Test("logbook bench with no logbook-bench beside logbook exits 3 and says where it looked")
    func benchMissing() async throws {
        let cluster = try ServiceCluster()
        let alone = cluster.directory.appendingPathComponent("logbook")
        try await copyExecutable(ServiceCluster.binary, to: alone)
        let result = try await runLogbook(["bench", "--quick"], executable: alone)
        #expect(result.status == 3)
        #expect(result.stdout.isEmpty)
        #expect(
            result.stderr.hasPrefix("logbook: error: bench: logbook-bench is not beside logbook"), "\(result.stderr)")
        #expect(result.stderr.contains(cluster.directory.appendingPathComponent("logbook-bench").path))
        #expect(result.stderr.split(separator: "\n").count == 1)
    }

    @Test("logbook-bench with no logbook to measure exits 3 before it starts anything")
    func logbookMissing() async throws {
        let cluster = try ServiceCluster()
        let missing = cluster.directory.appendingPathComponent("nothing-here").path
        let result = try await runLogbook(
            ["--quick", "--logbook", missing, "--out", cluster.directory.appendingPathComponent("r.json").path],
            executable: Self.benchBinary)
        #expect(result.status == 3)
        #expect(result.stderr == "logbook-bench: error: --logbook: no executable file at \(missing)\n")
        #expect(!FileManager.default.fileExists(atPath: cluster.directory.appendingPathComponent("r.json").path))
    }
}
