import Foundation
import LogbookBench
import LogbookCommandLine

/// `logbook-bench`: measures the real service (the worker and the query process of the
/// `logbook` executable beside it, started on free loopback ports in a scratch directory)
/// beside baselines of the same run, prints the table and writes it as JSON. Exits 3 when
/// a section failed (its row says why) or `logbook` cannot be found.
struct BenchCommand {
    static let program = "logbook-bench"

    let arguments: Arguments
    let output: StandardStreams

    func run() throws(CLIError) -> ExitStatus {
        guard arguments.positionals.isEmpty else { throw .usage("the bench takes no positional arguments") }
        let options = try benchOptions()
        let logbook = try logbookExecutable()
        // Before any thread starts, so that only the watcher thread receives Ctrl-C.
        InterruptWatch.blockSignals()
        let run: BenchRun
        do throws(BenchError) {
            run = try BenchRun(options: options, executable: logbook, commandLine: Self.commandLine())
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
        for failure in report.failures { output.error(failure) }
        return report.failures.isEmpty ? .success : .unavailable
    }

    /// The `logbook` executable to measure: `--logbook PATH`, else the one beside this one.
    private func logbookExecutable() throws(CLIError) -> String {
        guard let path = arguments.value(Self.logbook) else { return try ExecutablePath.sibling("logbook") }
        try ExecutablePath.requireExecutable(path, "\(Self.logbook.flag)")
        return path
    }

    private func benchOptions() throws(CLIError) -> BenchOptions {
        var options: BenchOptions
        do throws(BenchError) {
            let store = try arguments.value(Self.store).map(BenchOptions.store(from:)) ?? .sqlite
            options = BenchOptions.standard(quick: arguments.isSet(Self.quick), store: store)
            if let list = arguments.value(Self.only) {
                options.sections = try BenchOptions.sections(from: list, store: store)
            }
            if let list = arguments.value(Self.clients) { options.clients = try BenchOptions.clients(from: list) }
            if let list = arguments.value(Self.workers) { options.workers = try BenchOptions.workers(from: list) }
        } catch {
            throw .usage(error.message)
        }
        options.window = try arguments.integer(Self.window, in: 1...10_000) ?? options.window
        options.loadThreads = try arguments.integer(Self.threads, in: 1...64) ?? options.loadThreads
        options.secondsPerRun = Double(try arguments.integer(Self.seconds, in: 1...600) ?? Int(options.secondsPerRun))
        options.logEvents = try arguments.integer(Self.events, in: 1_000...100_000_000) ?? options.logEvents
        options.logStreams = try arguments.integer(Self.streams, in: 10...10_000_000) ?? options.logStreams
        options.feedEventsPerSecond = Double(
            try arguments.integer(Self.feedRate, in: 10...1_000_000) ?? Int(options.feedEventsPerSecond))
        options.latencySamples = try arguments.integer(Self.samples, in: 10...10_000_000) ?? options.latencySamples
        options.outputPath = arguments.value(Self.out) ?? options.outputPath
        options.dataDirectory = arguments.value(Self.dataDirectory)
        return options
    }

    /// The command line as typed, words with spaces quoted.
    private static func commandLine() -> String {
        CommandLine.arguments.map { word in
            word.isEmpty || word.contains(" ") ? "'\(word)'" : word
        }.joined(separator: " ")
    }
}
