import Foundation
import LogbookBench

/// `logbook bench`: measures the real service (this executable's worker and query process,
/// started on free loopback ports in a scratch directory) beside baselines of the same run,
/// prints the table and writes it as JSON. Exits 3 when a section failed (its row says why).
struct BenchCommand {
    static let options: Set<String> = [
        "out", "only", "clients", "window", "threads", "seconds", "events", "streams", "feed-rate", "samples",
    ]
    static let switches: Set<String> = ["quick"]

    let arguments: Arguments
    let configuration: Configuration
    let output: StandardStreams

    func run() throws(CLIError) -> ExitStatus {
        guard arguments.positionals.isEmpty else { throw .usage("bench takes no positional arguments") }
        for option in ["commands", "feed", "queries", "log"] where arguments.options[option] != nil {
            throw .usage("--\(option): the bench starts its own service on free loopback ports")
        }
        let options = try benchOptions()
        // Before any thread starts, so that only the watcher thread receives Ctrl-C.
        InterruptWatch.blockSignals()
        let executable = try UpCommand.ownExecutable()
        let run: BenchRun
        do throws(BenchError) {
            run = try BenchRun(options: options, executable: executable, commandLine: Self.commandLine())
        } catch {
            throw .unavailable(error.message)
        }
        InterruptWatch.start { run.interrupt() }
        let report = run.run { line in
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
        output.out(report.tableText)
        do {
            try Data(report.jsonText.utf8).write(to: URL(fileURLWithPath: options.outputPath))
            FileHandle.standardError.write(Data("bench: results written to \(options.outputPath)\n".utf8))
        } catch {
            throw .unavailable("cannot write \(options.outputPath): \(error.localizedDescription)")
        }
        for failure in report.failures { output.error("bench: \(failure)") }
        return report.failures.isEmpty ? .success : .unavailable
    }

    private func benchOptions() throws(CLIError) -> BenchOptions {
        var options = BenchOptions.standard(quick: arguments.switches.contains("quick"))
        do throws(BenchError) {
            if let list = arguments.options["only"] { options.sections = try BenchOptions.sections(from: list) }
            if let list = arguments.options["clients"] { options.clients = try BenchOptions.clients(from: list) }
        } catch {
            throw .usage(error.message)
        }
        options.window = try arguments.integer("window", in: 1...10_000) ?? options.window
        options.loadThreads = try arguments.integer("threads", in: 1...64) ?? options.loadThreads
        options.secondsPerRun = Double(try arguments.integer("seconds", in: 1...600) ?? Int(options.secondsPerRun))
        options.logEvents = try arguments.integer("events", in: 1_000...100_000_000) ?? options.logEvents
        options.logStreams = try arguments.integer("streams", in: 10...10_000_000) ?? options.logStreams
        options.feedEventsPerSecond = Double(
            try arguments.integer("feed-rate", in: 10...1_000_000) ?? Int(options.feedEventsPerSecond))
        options.latencySamples = try arguments.integer("samples", in: 10...10_000_000) ?? options.latencySamples
        options.outputPath = arguments.options["out"] ?? options.outputPath
        options.dataDirectory = arguments.options["data-dir"]
        return options
    }

    /// The command line as typed, words with spaces quoted.
    private static func commandLine() -> String {
        CommandLine.arguments.map { word in
            word.isEmpty || word.contains(" ") ? "'\(word)'" : word
        }.joined(separator: " ")
    }
}
