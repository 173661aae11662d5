import Foundation
import LogbookJSON
import Testing

@testable import LogbookBench

@Suite("Bench: the scale section's options, readings, model and rows")
struct ScaleTests {
    @Test("--store picks the sections: scale is PostgreSQL's, the others SQLite's")
    func storeAndSections() throws {
        #expect(try BenchOptions.store(from: "postgresql") == .postgresql)
        #expect(throws: BenchError.self) { try BenchOptions.store(from: "postgres://localhost") }
        #expect(BenchOptions.standard(quick: true, store: .postgresql).sections == [.scale])
        #expect(!BenchOptions.standard(quick: false).sections.contains(.scale))
        #expect(try BenchOptions.sections(from: "scale", store: .postgresql) == [.scale])
        #expect(throws: BenchError.self) { try BenchOptions.sections(from: "scale") }
        #expect(throws: BenchError.self) { try BenchOptions.sections(from: "throughput", store: .postgresql) }
        #expect(try BenchOptions.workers(from: "1,2,3") == [1, 2, 3])
        #expect(throws: BenchError.self) { try BenchOptions.workers(from: "0") }
        var options = BenchOptions.standard(quick: false, store: .postgresql)
        options.clients = [8, 64, 16]
        #expect(options.scaleClients == 64)
    }

    @Test("a /proc/PID/stat line gives the parent, own and reaped children's processor time")
    func processStat() {
        let stat = "4242 (postgres: bench (x)) S 77 4242 4242 0 -1 4194560 900 0 0 0 250 50 30 20 20 0 7 0 100 0 0"
        #expect(
            ProcessStat.parse(stat: stat, ticksPerSecond: 100)
                == ProcessStat(parent: 77, seconds: 3, childrenSeconds: 0.5))
        #expect(ProcessStat.parse(stat: "4242 (x) S 1 2", ticksPerSecond: 100) == nil)
        #expect(ProcessTreeCPU.seconds(of: getpid()) != nil)
    }

    @Test("/proc/stat gives the share of the processors' time busy, irq included, idle, iowait and steal not")
    func machineCPU() throws {
        let before = try #require(MachineCPU.parse(procStat: "cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3 4 5 6 7 8\n"))
        #expect(before == MachineCPU(busyTicks: 150, stealTicks: 0, totalTicks: 1000))
        let after = MachineCPU(busyTicks: 250, totalTicks: 1200)
        #expect(MachineCPU.busyShare(from: before, to: after) == 0.5)
        #expect(MachineCPU.parse(procStat: "intr 1 2 3") == nil)
    }

    @Test("head-lock samples: only those in the span count; held, contended and waiters")
    func headLockOutcome() throws {
        let samples = [
            HeadLockSampler.Sample(at: 5, holders: 1, waiting: 0),
            HeadLockSampler.Sample(at: 10, holders: 1, waiting: 2),
            HeadLockSampler.Sample(at: 20, holders: 0, waiting: 0),
            HeadLockSampler.Sample(at: 30, holders: 1, waiting: 0),
            HeadLockSampler.Sample(at: 40, holders: 0, waiting: 0),
            HeadLockSampler.Sample(at: 99, holders: 1, waiting: 1),
        ]
        let outcome = HeadLockSampler.Outcome(samples, from: 10, to: 40)
        #expect(outcome.samples == 4)
        #expect(outcome.heldShare == 0.5)
        #expect(outcome.contendedShare == 0.25)
        #expect(outcome.meanWaiters == 0.5)
        #expect(try #require(outcome.heldStandardError) == 0.25)
        #expect(HeadLockSampler.Outcome([], from: 0, to: 1).heldShare == nil)
    }

    static let costs = CapacityModel.Costs(
        worker: 100e-6, postgres: 200e-6, feed: 20e-6, load: 30e-6, serial: 10e-6)

    @Test("the model: the smallest of the workers', the head lock's and the processors' bounds")
    func model() throws {
        let model = CapacityModel(costs: Self.costs)
        let one = try #require(model.predict(workers: 1, processors: 2))
        #expect(abs(one.perSecond - 5_000) < 1e-6, "the larger of a worker's and its backend's costs")
        #expect(one.bound == .workers)
        let three = try #require(model.predict(workers: 3, processors: 2))
        #expect(abs(three.perSecond - 2 / 350e-6) < 1e-6)
        #expect(three.bound == .processors)
        let many = try #require(model.predict(workers: 40, processors: nil))
        #expect(abs(many.perSecond - 100_000) < 1e-6)
        #expect(many.bound == .headLock)
        #expect(
            CapacityModel(costs: .init(worker: 0, postgres: 0, feed: 0, load: 0, serial: 0)).predict(
                workers: 1, processors: nil) == nil)
    }

    static func step(workers: Int, commands: Int, held: Int) -> ScaleStep {
        var step = ScaleStep(workers: workers)
        step.commands = commands
        step.seconds = 1
        step.cpuSeconds = 1.2
        step.commandsPerWorker = Array(repeating: commands / workers, count: workers)
        step.batches = 10
        step.decidedAgain = commands / 10
        step.workerCPU = Array(repeating: Double(commands) * 100e-6 / Double(workers), count: workers)
        step.postgresCPU = Double(commands) * 150e-6
        step.feedCPU = Double(commands) * 20e-6
        step.loadCPU = Double(commands) * 30e-6
        let samples = (0..<100).map { HeadLockSampler.Sample(at: UInt64($0), holders: $0 < held ? 1 : 0, waiting: 0) }
        step.headLock = HeadLockSampler.Outcome(samples, from: 0, to: 100)
        step.feed = [.init(offered: 5_000, delays: nil)]
        return step
    }

    @Test("rows: commands/s beside PostgreSQL and one worker, costs per process, the lock's share, the model")
    func rows() throws {
        let figures = ScaleFigures(
            steps: [
                Self.step(workers: 1, commands: 4_000, held: 20), Self.step(workers: 2, commands: 6_000, held: 30),
            ],
            before: .init(perSecond: 3_000, postgresCPUPerInsert: 50e-6), after: .init(perSecond: 5_000),
            sqliteWorker: 8_000, clients: 64, window: 16, processors: 2, roundTrip: nil
        ).figures
        func row(_ prefix: String) throws -> BenchFigure { try #require(figures.first { $0.name.hasPrefix(prefix) }) }
        let one = try row("commands/s, 1 worker ")
        #expect(one.target?.threshold == 4_000, "the mean of PostgreSQL's runs before and after")
        #expect(one.met == true)
        let sqlite = try #require(one.baselines.last)
        #expect(sqlite.name.contains("SQLite") && sqlite.value == 8_000, "one SQLite worker, same run")
        let two = try row("commands/s, 2 workers")
        #expect(two.baselines.map(\.value) == [3_000, 5_000, 4_000])
        #expect(two.met == true)
        let postgres = try row("processor µs per command, 1 worker: PostgreSQL")
        #expect(abs((postgres.value ?? 0) - 150) < 1e-6)
        #expect(postgres.baselines.first?.value == 50)
        #expect(try row("commands decided again after a conflict, 2 workers").value == 10)
        let lock = try row("head-row lock held, share of wall time, 2 workers")
        #expect(lock.value == 30)
        #expect(lock.met == true)
        #expect(lock.details["serialMicrosecondsPerCommand"] == .double(50))
        #expect(try row("feed reply").note?.hasPrefix("skipped") == true)
        let model = try row("model: 1 worker on 2 processors")
        #expect(abs((model.value ?? 0) - 2 / 300e-6) < 1e-3)
        #expect(model.baselines.first?.value == 4_000)
        #expect(abs((try row("model: 2 workers with enough processors").value ?? 0) - 2 / 150e-6) < 1e-3)
        #expect(BenchSession.feedRates(asked: 5_000, peakCommands: 2_000) == [5_000, 1_250])
        #expect(BenchSession.feedRates(asked: 5_000, peakCommands: 8_000) == [5_000])
    }
}
