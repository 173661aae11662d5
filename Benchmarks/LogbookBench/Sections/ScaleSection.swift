import CPostgres
import Glibc
import LogbookJSON
import LogbookWire
import LogbookZMQ

extension BenchSession {
    /// Section 7 (`--store postgresql`): Logbook scaled out. A throwaway PostgreSQL cluster;
    /// PostgreSQL's own commit-per-insert at the same concurrency before and after; one SQLite
    /// worker under the same load; then for
    /// each worker count N, a fresh database shared by N workers and one feed process, driven
    /// by the largest `--clients` count of pipelined clients, each connected to every worker.
    mutating func measureScale() throws(BenchError) {
        guard let binaries = PostgresServer.binaries() else {
            throw BenchError("no PostgreSQL server binaries in /usr/lib/postgresql/*/bin (scripts/install-deps.sh)")
        }
        let clients = options.scaleClients
        progress("bench: starting PostgreSQL \(binaries.version)")
        let server = try PostgresServer.start(
            binaries: binaries, maxConnections: clients + 4 * (options.workers.max() ?? 1) + 30,
            logDirectory: logDirectory, children: children,
            register: { directory in run.otherDirectories.update { $0.append(directory) } })
        defer { server.stop(children: children) }
        if facts.roundTrip == nil { facts.roundTrip = try bareRoundTrip(samples: options.latencySamples) }
        let before = try postgresBaseline(server, clients: clients)
        let sqlite = try sqliteWorker(clients: clients)
        var steps: [ScaleStep] = []
        for (index, workers) in options.workers.enumerated() {
            steps.append(try measureScaleStep(workers: workers, index: index, server: server, clients: clients))
        }
        let after = try postgresBaseline(server, clients: clients)
        figures +=
            ScaleFigures(
                steps: steps, before: before, after: after, sqliteWorker: sqlite, clients: clients,
                window: options.window,
                processors: Double(sysconf(Int32(_SC_NPROCESSORS_ONLN))), roundTrip: facts.roundTrip
            ).figures
    }

    /// PostgreSQL's own single-row INSERTs, each committed, at `clients` × the window, with
    /// the processor time of its processes per insert.
    private func postgresBaseline(_ server: PostgresServer, clients: Int) throws(BenchError) -> ScaleFigures.Baseline {
        progress("bench: PostgreSQL INSERT + commit, \(clients) clients")
        let cpuBefore = ProcessTreeCPU.seconds(of: server.pid)
        let outcome = try PostgresLoad.run(
            connectionString: server.connectionString, clients: clients, window: options.window,
            seconds: options.secondsPerRun, payloadBytes: facts.envelopeBytes ?? 400)
        guard outcome.errors == 0 else { throw BenchError("PostgreSQL refused \(outcome.errors) INSERTs") }
        let cpuAfter = ProcessTreeCPU.seconds(of: server.pid)
        var perInsert: Double?
        if let cpuBefore, let cpuAfter { perInsert = (cpuAfter - cpuBefore) / Double(max(outcome.completed, 1)) }
        return ScaleFigures.Baseline(perSecond: outcome.perSecond, postgresCPUPerInsert: perInsert)
    }

    /// One SQLite worker (with its query process) on a fresh log, under the load the steps
    /// get: the commands/s a team leaves when it moves to PostgreSQL.
    private mutating func sqliteWorker(clients: Int) throws(BenchError) -> Double {
        progress("bench: scale: 1 worker on SQLite, \(clients) clients")
        let service = try LogbookService.start(
            executable: run.executable, dataDirectory: try run.scratch.subdirectory("service-scale-sqlite"),
            logDirectory: try run.scratch.subdirectory("logs-scale-sqlite"), children: children, context: context)
        defer { for problem in service.stop(children: children) { progress("bench: scale: SQLite \(problem)") } }
        let tag = "q\(runTag)"
        let seeded = max(4, options.window)
        try seed(tag: tag, clients: clients, seeded: seeded, on: service)
        let result = try load(
            LoadPlan(
                endpoint: service.endpoints.commands, clients: clients, threads: options.loadThreads,
                pacing: .closedLoop(window: options.window), length: .seconds(options.secondsPerRun),
                requests: CommandMix(tag: tag, seeded: seeded)))
        guard result.unanswered == 0 else {
            throw BenchError("the SQLite worker left \(result.unanswered) commands unanswered")
        }
        return result.perSecond
    }

    /// One worker count: a fresh database, the feed process and the workers, seeding, the
    /// closed-loop run with every process's processor time and the head-lock sampler, then
    /// the paced feed run.
    private mutating func measureScaleStep(workers count: Int, index: Int, server: PostgresServer, clients: Int)
        throws(BenchError) -> ScaleStep
    {
        let database = "logbook_\(index)_\(count)"
        try PostgresConnection(server.connectionString).execute("CREATE DATABASE \(database)")
        progress("bench: scale: \(count) worker\(count == 1 ? "" : "s") and a feed process on PostgreSQL")
        let service = try SharedLogService.start(
            workers: count, executable: run.executable,
            store: "postgresql://bench@127.0.0.1:\(server.port)/\(database)", dataDirectory: serviceDirectory,
            logDirectory: logDirectory, children: children, context: context)
        defer { for problem in service.stop(children: children) { progress("bench: \(problem)") } }
        let endpoints = service.commandEndpoints
        func plan(_ requests: any LoadRequests, clients: Int, pacing: LoadPlan.Pacing, length: LoadPlan.Length)
            -> LoadPlan
        {
            LoadPlan(
                endpoint: endpoints[0], otherEndpoints: Array(endpoints.dropFirst()), clients: clients,
                threads: options.loadThreads, pacing: pacing, length: length, requests: requests)
        }
        let tag = "s\(index)\(runTag)"
        let seeded = max(4, options.window)
        let seeding = try load(
            plan(
                SeedCommands(tag: tag, seeded: seeded), clients: clients, pacing: .closedLoop(window: options.window),
                length: .requestsPerClient(2 * seeded)))
        guard seeding.rejected == 0, seeding.unanswered == 0 else {
            throw BenchError("seeding failed: \(seeding.rejected) refused (\(seeding.rejections))")
        }

        let sampler = try HeadLockSampler(
            connectionString: PostgresServer.connectionString(port: server.port, database: database),
            intervalMicroseconds: 1_000)
        defer { sampler.stop() }
        let profiler = try PostgresConnection(
            PostgresServer.connectionString(port: server.port, database: database))
        let hasStatements = try PostgresProfile.reset(profiler)
        var kinds = try PostgresProfile.processKinds(profiler)
        kinds[PQbackendPID(profiler.handle)] = "the bench's profile reader"
        let statusBefore = try endpoints.map { endpoint throws(BenchError) in try workerStatus(endpoint) }
        let cpuBefore = ScaleCPUReading(service: service, postgres: server.pid, sampler: sampler.backendPid)
        progress("bench: scale: \(count) worker\(count == 1 ? "" : "s"), \(clients) clients")
        let result = try load(
            plan(
                CommandMix(tag: tag, seeded: seeded), clients: clients, pacing: .closedLoop(window: options.window),
                length: .seconds(options.secondsPerRun)))
        let lock = try sampler.outcome(from: result.startedAt, to: result.endedAt)
        // The feed may still be publishing the last batches.
        BenchClock.sleep(milliseconds: 500)
        let cpuAfter = ScaleCPUReading(service: service, postgres: server.pid, sampler: sampler.backendPid)
        let statusAfter = try endpoints.map { endpoint throws(BenchError) in try workerStatus(endpoint) }
        kinds.merge(try PostgresProfile.processKinds(profiler)) { first, _ in first }
        if let samplerPid = sampler.backendPid { kinds[samplerPid] = "the bench's head-lock sampler" }
        var profile = PostgresProfile()
        if let before = cpuBefore.postgresProcesses, let after = cpuAfter.postgresProcesses {
            profile.processorSeconds = PostgresProfile.processorSeconds(
                server: server.pid, from: before, to: after, kinds: kinds)
        }
        if hasStatements { profile.statements = try PostgresProfile.statements(profiler, limit: 12) }

        var step = ScaleStep(workers: count)
        step.commands = result.completed
        step.seconds = result.seconds
        step.rejected = result.rejected
        step.unanswered = result.unanswered
        step.headLock = lock
        step.postgresProfile = profile
        if let latency = LatencySummary(nanoseconds: result.latencies) {
            step.latencyP50Ms = latency.p50 / 1000
            step.latencyP99Ms = latency.p99 / 1000
        }
        for (before, after) in zip(statusBefore, statusAfter) {
            let answered = { (status: WorkerStatus) in status.commands.accepted + status.commands.rejected }
            step.commandsPerWorker.append(answered(after) - answered(before))
            step.batches += after.batches.count - before.batches.count
            step.decidedAgain += (after.commands.decidedAgain ?? 0) - (before.commands.decidedAgain ?? 0)
        }
        cpuAfter.record(since: cpuBefore, into: &step)

        // At the asked rate; when that is beyond what this step took (its commands/s × 1.25
        // feed events), also at half that peak, where the figures show the feed, not a queue.
        for rate in Self.feedRates(asked: options.scaleFeedEventsPerSecond, peakCommands: step.perSecond) {
            progress("bench: scale: feed latency at \(Int(rate)) events/s")
            var feedPlan = plan(
                CommandMix(tag: "\(tag)f\(step.feed.count)", seedTag: tag, seeded: seeded), clients: 4,
                pacing: .paced(perSecond: rate / Self.feedEventsPerCommand, maximumInFlight: 1_000),
                length: .seconds(options.secondsPerRun))
            feedPlan.threads = 1
            feedPlan.feedEndpoint = service.feed
            step.feed.append(ScaleStep.FeedRun(offered: rate, delays: FeedDelays(try load(feedPlan))))
        }
        return step
    }

    /// The feed rates of a step: the asked one, and half the step's peak when the asked one
    /// is beyond it.
    static func feedRates(asked: Double, peakCommands: Double) -> [Double] {
        let peak = peakCommands * feedEventsPerCommand
        return peak > 0 && peak < asked ? [asked, peak / 2] : [asked]
    }

    /// A worker's `Status`, typed.
    private func workerStatus(_ endpoint: String) throws(BenchError) -> WorkerStatus {
        do {
            return try WorkerStatus(json: .object(try status(of: endpoint)))
        } catch let error as BenchError {
            throw error
        } catch {
            throw BenchError("\(endpoint) answered a Status of another shape: \(error)")
        }
    }
}

/// Processor seconds used so far by every process of a scale step (each worker, the feed
/// process, PostgreSQL's processes but the sampler's backend, that backend, the bench) and
/// by the whole machine.
private struct ScaleCPUReading {
    var workers: [Double?]
    var feed: Double?
    /// PostgreSQL's processes one by one (`ProcessTreeCPU.byProcess`), the sampler's included.
    var postgresProcesses: [Int32: Double]?
    var postgres: Double?
    var sampler: Double?
    var bench: Double?
    var machine: MachineCPU?
    var at: UInt64

    init(service: SharedLogService, postgres: Int32, sampler samplerPid: Int32?) {
        workers = service.workers.map { ProcessCPU.of($0.pid)?.seconds }
        feed = ProcessCPU.of(service.feedPid)?.seconds
        postgresProcesses = ProcessTreeCPU.byProcess(of: postgres)
        self.postgres = postgresProcesses.map { reading in
            reading.filter { $0.key != samplerPid }.values.reduce(0, +)
        }
        sampler = samplerPid.flatMap { ProcessCPU.of($0)?.seconds }
        bench = ProcessCPU.of(0)?.seconds
        machine = MachineCPU.now()
        at = BenchClock.nanoseconds()
    }

    func record(since before: ScaleCPUReading, into step: inout ScaleStep) {
        func used(_ after: Double?, _ before: Double?) -> Double {
            guard let after, let before else { return 0 }
            return after - before
        }
        step.workerCPU = zip(before.workers, workers).map { used($1, $0) }
        step.feedCPU = used(feed, before.feed)
        step.postgresCPU = used(postgres, before.postgres)
        step.samplerCPU = used(sampler, before.sampler)
        step.loadCPU = used(bench, before.bench)
        step.machineBusyShare = MachineCPU.busyShare(from: before.machine, to: machine)
        step.cpuSeconds = Double(at - before.at) / 1e9
    }
}
