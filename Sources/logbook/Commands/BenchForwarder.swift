import Glibc
import LogbookCommandLine

/// `logbook bench …`: the bench is an executable of its own, `logbook-bench`, built beside
/// `logbook` (so that `logbook` links neither the bench nor libpq). This runs it in this
/// process's place with the same words, `--help` included; exit 3 when it is not there.
enum BenchForwarder: Subcommand {
    static let program = "logbook-bench"

    static let spec = CommandSpec(
        name: "bench", usage: "[options]",
        listings: [.init("bench", "measure throughput, latency, feed, replay and memory beside baselines")],
        section: .measuring,
        description: """
            Runs \(program), installed beside logbook, with the same options; \
            '\(program) --help' lists them.
            """)

    static func main(_ words: [String], in logbook: Logbook) -> ExitStatus {
        do throws(CLIError) {
            let path = try ExecutablePath.sibling(program)
            try replaceProcess(with: path, words)
        } catch {
            logbook.output.error("bench: \(error.message) (build it with 'swift build --product \(program)')")
            return error.status
        }
    }

    /// Runs `path` with `arguments` in place of this process; returns only by throwing.
    private static func replaceProcess(with path: String, _ arguments: [String]) throws(CLIError) -> Never {
        let argv = ([path] + arguments).map { strdup($0) }
        defer { for argument in argv { free(argument) } }
        var terminated = argv + [nil]
        _ = terminated.withUnsafeMutableBufferPointer { pointers in execv(path, pointers.baseAddress!) }
        throw .unavailable("cannot run \(path): \(String(cString: strerror(errno)))")
    }
}
