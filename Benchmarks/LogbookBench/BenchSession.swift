import LogbookJSON
import LogbookZMQ

/// Figures one section measured that later ones read against (the peak throughput, the
/// sizes of requests and replies, the bare round trip).
struct MeasuredFacts {
    /// Commands a second per client count.
    var throughput: [Int: Double] = [:]
    var requestBytes: Int?
    var replyBytes: Int?
    /// The mean size of one event envelope as the service sends it.
    var envelopeBytes: Int?
    var roundTrip: LatencySummary?
    var fsyncMicroseconds: Double?
    var generated: LogGenerator.Summary?

    var peakThroughput: Double? { throughput.values.max() }
}

/// The state of one bench run while its sections execute: the service under test, the
/// figures so far and the facts sections share. Lives on the thread that runs the bench
/// (its control sockets belong to that thread).
struct BenchSession {
    let run: BenchRun
    let progress: (String) -> Void
    let context: ZMQContext
    /// Letters that make this run's command ids unique.
    let runTag: String
    var figures: [BenchFigure] = []
    var failures: [String] = []
    var service: LogbookService?
    var facts = MeasuredFacts()

    var options: BenchOptions { run.options }
    var children: ChildProcesses { run.children }
    var serviceDirectory: String { run.scratch.file("service") }
    var logDirectory: String { run.scratch.file("logs") }
    var baselineDirectory: String { run.scratch.file("baselines") }

    init(run: BenchRun, progress: @escaping (String) -> Void) throws(BenchError) {
        self.run = run
        self.progress = progress
        do {
            context = try ZMQContext()
        } catch {
            throw BenchError("libzmq cannot create a context: \(error)")
        }
        var random = SystemRandomNumberGenerator()
        runTag = String((0..<6).map { _ in "abcdefghijklmnopqrstuvwxyz".randomElement(using: &random) ?? "x" })
    }

    /// Runs every section asked for, in order, recording failures as rows.
    mutating func runSections() {
        let sections = options.sections.sorted()
        let needsLog = !options.sections.isDisjoint(with: [.replay, .memory, .groups])
        // compare and scale start servers of their own.
        let needsService = sections.contains { $0 != .compare && $0 != .scale }
        do throws(BenchError) {
            for directory in ["service", "logs", "baselines"] { _ = try run.scratch.subdirectory(directory) }
            if needsLog { try generateLog() }
            if needsService { try startService() }
        } catch {
            record(failure: "starting the service", error)
        }
        for section in sections {
            if section == .compare { stopService() }
            guard service != nil || section == .compare || section == .scale || section == .privacy else {
                figures.append(
                    .skipped(
                        section: section.rawValue, name: section.rawValue, unit: .perSecond,
                        because: "the service did not start"))
                continue
            }
            let started = BenchClock.nanoseconds()
            defer {
                let seconds = NumberFormat.decimal(BenchClock.seconds(since: started), places: 1)
                progress("bench: \(section.rawValue) took \(seconds) s")
            }
            do throws(BenchError) {
                switch section {
                case .replay: try measureReplay()
                case .throughput: try measureThroughput()
                case .latency: try measureLatency()
                case .feed: try measureFeed()
                case .memory: try measureMemory()
                case .groups: try measureGroups()
                case .curve: try measureCurve()
                case .privacy: try measurePrivacy()
                case .compare: try measureCompare()
                case .scale: try measureScale()
                }
            } catch {
                record(failure: section.rawValue, error)
                figures.append(
                    BenchFigure(
                        section: section.rawValue, name: "\(section.rawValue) failed", value: nil, unit: .perSecond,
                        note: "failed: \(error.message)"))
            }
        }
        stopService()
    }

    mutating func record(failure step: String, _ error: BenchError) {
        failures.append("\(step): \(error.message)")
        progress("bench: \(step) failed: \(error.message)")
    }

    // MARK: The service

    private mutating func generateLog() throws(BenchError) {
        progress(
            "bench: writing a log of \(options.logEvents) events on \(options.logStreams) streams")
        let generated = try LogGenerator.write(
            events: options.logEvents, streams: options.logStreams, to: serviceDirectory + "/events.sqlite3")
        facts.generated = generated
        progress("bench: log written in \(NumberFormat.decimal(generated.seconds, places: 1)) s")
    }

    private mutating func startService() throws(BenchError) {
        progress("bench: starting the worker and the query process")
        let started = try LogbookService.start(
            executable: run.executable, dataDirectory: serviceDirectory, logDirectory: logDirectory,
            children: children, context: context)
        service = started
        if started.catchUpEvents > 0 {
            let seconds = NumberFormat.decimal(started.catchUpSeconds, places: 1)
            progress("bench: the query process applied the \(started.catchUpEvents) events of the log in \(seconds) s")
        }
    }

    private mutating func stopService() {
        guard let service else { return }
        for problem in service.stop(children: children) {
            failures.append(problem)
            progress("bench: \(problem); see \(logDirectory)")
        }
        self.service = nil
    }

    /// The running service, or an error saying it is gone.
    func runningService() throws(BenchError) -> LogbookService {
        guard let service else { throw BenchError("the service is not running") }
        guard children.isRunning(service.workerPid) else {
            throw BenchError(
                "the worker has ended:\n\(ChildProcesses.tail(of: logDirectory + "/worker.log", lines: 5))")
        }
        guard children.isRunning(service.queryPid) else {
            throw BenchError(
                "the query process has ended:\n\(ChildProcesses.tail(of: logDirectory + "/query.log", lines: 5))")
        }
        return service
    }

    // MARK: Helpers for the sections

    /// One `Status` of a server of the service.
    func status(of endpoint: String) throws(BenchError) -> JSONObject {
        var client = try ControlClient(context, endpoint: endpoint)
        guard let status = try client.status(timeoutMilliseconds: 10_000) else {
            throw BenchError("\(endpoint) did not answer Status within 10 s")
        }
        return status
    }

    func load(_ plan: LoadPlan) throws(BenchError) -> LoadResult {
        try LoadDriver.run(plan, context: context)
    }

    /// Registers the users and adds the products a `CommandMix` with this tag uses, on the
    /// running service or on `service` (with its CURVE keys when it is secured).
    func seed(
        tag: String, clients: Int, seeded: Int, on service: LogbookService? = nil, curve: CurveClientKeys? = nil
    ) throws(BenchError) {
        let target = if let service { service } else { try runningService() }
        let endpoint = target.endpoints.commands
        let result = try load(
            LoadPlan(
                endpoint: endpoint, clients: clients, threads: options.loadThreads,
                pacing: .closedLoop(window: options.window), length: .requestsPerClient(2 * seeded),
                requests: SeedCommands(tag: tag, seeded: seeded), curve: curve))
        guard result.rejected == 0, result.unanswered == 0 else {
            throw BenchError(
                "seeding users and products failed: \(result.rejected) refused (\(result.rejections)), "
                    + "\(result.unanswered) unanswered")
        }
    }

    /// The bare libzmq round trip: one client, one request in flight, `samples` times.
    func bareRoundTrip(samples: Int) throws(BenchError) -> LatencySummary {
        let echo = try EchoServer(replySize: facts.replyBytes ?? 600)
        let result = try load(
            LoadPlan(
                endpoint: echo.endpoint, clients: 1, threads: 1, pacing: .closedLoop(window: 1),
                length: .requestsPerClient(samples), requests: EchoRequests(size: facts.requestBytes ?? 200)))
        if let failure = echo.stop() { throw BenchError("the echo server failed: \(failure)") }
        guard let summary = LatencySummary(nanoseconds: result.latencies) else {
            throw BenchError("the echo server answered nothing")
        }
        return summary
    }
}
