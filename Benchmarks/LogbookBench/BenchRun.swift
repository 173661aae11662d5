import Foundation
import LogbookDomain
import LogbookJSON
import LogbookZMQ

/// One run of `logbook-bench`: starts the real service (the `logbook` executable's
/// `run worker` and `run query`) on free loopback ports in a scratch directory, measures
/// every section asked for beside its baselines, stops everything it started and removes
/// the scratch directory it made. A section that fails leaves a row saying why and the
/// others still run.
public final class BenchRun: Sendable {
    public let options: BenchOptions
    let executable: String
    let commandLine: String
    let scratch: ScratchDirectory
    let children = ChildProcesses()
    /// Directories made outside the scratch directory (a PostgreSQL cluster must belong to
    /// the postgres user), removed with it.
    let otherDirectories = Shared<[ScratchDirectory]>([])

    /// - Parameters:
    ///   - executable: the `logbook` binary to start the service from (the one beside
    ///     `logbook-bench`, or `--logbook PATH`).
    ///   - commandLine: how the bench was started, recorded in the report.
    public init(options: BenchOptions, executable: String, commandLine: String) throws(BenchError) {
        self.options = options
        self.executable = executable
        self.commandLine = commandLine
        if let path = options.dataDirectory {
            scratch = try ScratchDirectory.chosen(path)
        } else {
            scratch = try ScratchDirectory.temporary(prefix: "logbook-bench")
        }
    }

    /// Stops every process the run started and removes its scratch directory; for Ctrl-C.
    /// Safe from any thread. Returns what could not be cleaned up.
    @discardableResult
    public func interrupt() -> String? {
        children.stopAll()
        let problems = ([scratch] + otherDirectories.value).compactMap { $0.cleanUp() }
        return problems.isEmpty ? nil : problems.joined(separator: "; ")
    }

    /// Runs the sections; `progress` gets one line as each step starts.
    public func run(progress: @escaping (String) -> Void) -> BenchReport {
        let started = BenchClock.nanoseconds()
        let startedAt = Timestamp(millisecondsSinceEpoch: Int64(BenchClock.wallMilliseconds())).rfc3339
        let loadBefore = MachineInfo.loadAverage()
        let machineBefore = MachineCPU.now()
        var figures: [BenchFigure] = []
        var failures: [String] = []
        do throws(BenchError) {
            var session = try BenchSession(run: self, progress: progress)
            session.runSections()
            figures = session.figures
            failures = session.failures
        } catch {
            failures.append(error.message)
        }
        if let problem = interrupt() { progress("bench: warning: \(problem)") }
        return BenchReport(
            figures: figures, machine: MachineInfo.current(), commandLine: commandLine, startedAt: startedAt,
            seconds: BenchClock.seconds(since: started), settings: options.json.objectValue ?? [:],
            loadBefore: loadBefore, loadAfter: MachineInfo.loadAverage(),
            stealPercent: MachineCPU.stealShare(from: machineBefore, to: MachineCPU.now()).map { $0 * 100 },
            failures: failures)
    }
}
