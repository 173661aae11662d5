import LogbookJSON
import LogbookZMQ

extension BenchSession {
    /// Section: what CURVE costs. A second worker and query process, like the first but with
    /// every socket a CURVE server (keys made for the run; the bench's clients admitted as
    /// admin, the query process as reader), run beside the plain ones. The same load (the
    /// largest client count, closed loop, a subscriber on every topic) goes to each in turn,
    /// `rounds` times, so drift of the machine falls on both alike; each figure with CURVE on
    /// is read against the plain service's in the same run.
    mutating func measureCurve() throws(BenchError) {
        let plain = try runningService()
        let keys = try BenchKeys.make(in: try run.scratch.subdirectory("curve-keys"))
        let logs = try run.scratch.subdirectory("logs-curve")
        progress("bench: curve: starting a second worker and query process, every socket CURVE")
        let secured = try LogbookService.start(
            executable: run.executable, dataDirectory: try run.scratch.subdirectory("service-curve"),
            logDirectory: logs, children: children, context: context, keys: keys)
        let measured: Result<CurveComparison, BenchError>
        do throws(BenchError) {
            measured = .success(try compareCurve(plain: plain, secured: secured, keys: keys))
        } catch {
            measured = .failure(error)
        }
        for problem in secured.stop(children: children) {
            failures.append("curve: \(problem)")
            progress("bench: curve: \(problem); see \(logs)")
        }
        try addCurveFigures(try measured.get())
    }

    /// Rounds of the on/off alternation.
    static let curveRounds = 2

    private func compareCurve(plain: LogbookService, secured: LogbookService, keys: BenchKeys)
        throws(BenchError) -> CurveComparison
    {
        let clients = options.scaleClients
        let seeded = max(4, options.window)
        let modes: [(on: Bool, service: LogbookService, curve: CurveClientKeys?)] = [
            (false, plain, nil), (true, secured, keys.client),
        ]
        for mode in modes {
            try seed(
                tag: "k\(mode.on ? 1 : 0)\(runTag)", clients: clients, seeded: seeded, on: mode.service,
                curve: mode.curve)
        }
        var comparison = CurveComparison(clients: clients)
        for round in 1...Self.curveRounds {
            for mode in modes {
                progress("bench: curve: round \(round), CURVE \(mode.on ? "on" : "off"), \(clients) clients")
                let cpuBefore = ProcessCPU.of(mode.service.workerPid)
                let result = try load(
                    LoadPlan(
                        endpoint: mode.service.endpoints.commands, clients: clients, threads: options.loadThreads,
                        pacing: .closedLoop(window: options.window), length: .seconds(options.secondsPerRun),
                        requests: CommandMix(
                            tag: "k\(mode.on ? 1 : 0)\(round)\(runTag)",
                            seedTag: "k\(mode.on ? 1 : 0)\(runTag)", seeded: seeded),
                        feedEndpoint: mode.service.endpoints.feed, curve: mode.curve))
                guard result.completed > 0 else {
                    throw BenchError(
                        "CURVE \(mode.on ? "on" : "off"): no command was answered (\(result.errors.first ?? "no error"))"
                    )
                }
                let cpu = ProcessCPU.percent(
                    from: cpuBefore, to: ProcessCPU.of(mode.service.workerPid), over: result.seconds)
                comparison.add(CurveRun(result: result, workerCPUPercent: cpu), on: mode.on)
            }
        }
        return comparison
    }

    private mutating func addCurveFigures(_ comparison: CurveComparison) throws(BenchError) {
        let (off, on) = (comparison.off, comparison.on)
        let clients = "\(comparison.clients) client\(comparison.clients == 1 ? "" : "s")"
        let target = { (plain: Double) in BenchFigure.Target(.atLeast, plain * 0.75, "≥ 75% of CURVE off") }
        figures.append(
            BenchFigure(
                section: "curve", name: "commands/s, \(clients) × \(options.window) in flight, CURVE on",
                value: on.commandsPerSecond, unit: .perSecond,
                baselines: [.init("the same load, CURVE off (same run)", off.commandsPerSecond)],
                target: target(off.commandsPerSecond),
                note:
                    "mean of \(Self.curveRounds) runs each, alternating; the load clients encrypt too, on the same cores",
                details: comparison.details(\.commandsPerSecond)))
        figures.append(
            BenchFigure(
                section: "curve", name: "feed messages/s to one subscriber under that load, CURVE on",
                value: on.feedPerSecond, unit: .perSecond,
                baselines: [.init("the same load, CURVE off (same run)", off.feedPerSecond)],
                target: target(off.feedPerSecond), details: comparison.details(\.feedPerSecond)))
        if let onCPU = on.workerMicrosecondsPerCommand, let offCPU = off.workerMicrosecondsPerCommand {
            figures.append(
                BenchFigure(
                    section: "curve", name: "worker processor time per command, CURVE on", value: onCPU,
                    unit: .microseconds, baselines: [.init("CURVE off (same run)", offCPU)]))
        }
    }
}

/// One load run of the curve section and the worker's processor use during it.
struct CurveRun {
    let result: LoadResult
    let workerCPUPercent: Double?

    var commandsPerSecond: Double { result.perSecond }
    var feedPerSecond: Double { result.seconds > 0 ? Double(result.feedArrivals.count) / result.seconds : 0 }
    var workerMicrosecondsPerCommand: Double? {
        guard let workerCPUPercent, result.completed > 0 else { return nil }
        return workerCPUPercent / 100 * result.seconds * 1e6 / Double(result.completed)
    }
}

/// The runs of the curve section, CURVE off and on, and their means.
struct CurveComparison {
    let clients: Int
    private(set) var offRuns: [CurveRun] = []
    private(set) var onRuns: [CurveRun] = []

    init(clients: Int) { self.clients = clients }

    mutating func add(_ run: CurveRun, on: Bool) {
        if on { onRuns.append(run) } else { offRuns.append(run) }
    }

    /// The mean of each measure over one mode's runs.
    struct Means {
        let commandsPerSecond: Double
        let feedPerSecond: Double
        let workerMicrosecondsPerCommand: Double?

        init(_ runs: [CurveRun]) {
            let count = Double(max(runs.count, 1))
            commandsPerSecond = runs.map(\.commandsPerSecond).reduce(0, +) / count
            feedPerSecond = runs.map(\.feedPerSecond).reduce(0, +) / count
            let cpu = runs.compactMap(\.workerMicrosecondsPerCommand)
            workerMicrosecondsPerCommand =
                cpu.count == runs.count && !cpu.isEmpty
                ? cpu.reduce(0, +) / Double(cpu.count) : nil
        }
    }

    var off: Means { Means(offRuns) }
    var on: Means { Means(onRuns) }

    /// Every run's value of `measure`, per mode, for the report's details.
    func details(_ measure: KeyPath<CurveRun, Double>) -> JSONObject {
        [
            "off": .array(offRuns.map { .double(($0[keyPath: measure] * 10).rounded() / 10) }),
            "on": .array(onRuns.map { .double(($0[keyPath: measure] * 10).rounded() / 10) }),
            "unanswered": .int((offRuns + onRuns).map(\.result.unanswered).reduce(0, +)),
            "rejected": .int((offRuns + onRuns).map(\.result.rejected).reduce(0, +)),
        ]
    }
}
