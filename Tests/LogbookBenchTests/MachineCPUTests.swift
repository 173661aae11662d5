import Foundation
import Testing

@testable import LogbookBench

@Suite("Bench: the machine's processor time and the processor time per command")
struct MachineCPUTests {
    @Test("busy is user, nice, system, irq and softirq; steal apart; the total adds idle, iowait and steal")
    func parsesTheCPULine() throws {
        let text = """
            cpu  100 5 40 800 20 3 2 1 0 0
            cpu0 50 2 20 400 10 1 1 0 0 0
            intr 12345
            """
        let reading = try #require(MachineCPU.parse(procStat: text))
        #expect(reading.busyTicks == 150)
        #expect(reading.stealTicks == 1)
        #expect(reading.totalTicks == 971)
    }

    @Test("a line that is not the all-processors line, or too short, is not read")
    func refusesOtherText() {
        #expect(MachineCPU.parse(procStat: "cpu0 1 2 3 4 5 6 7 8\n") == nil)
        #expect(MachineCPU.parse(procStat: "cpu  1 2 3\n") == nil)
        #expect(MachineCPU.parse(procStat: "") == nil)
    }

    @Test("the busy share is of the time the machine had; the steal share is of all the time")
    func busyAndStealShares() {
        let before = MachineCPU(busyTicks: 1_000, totalTicks: 4_000)
        let after = MachineCPU(busyTicks: 1_150, totalTicks: 4_200)
        #expect(MachineCPU.busyShare(from: before, to: after) == 0.75)
        #expect(MachineCPU.stealShare(from: before, to: after) == 0)
        #expect(MachineCPU.busyShare(from: before, to: before) == nil)
        #expect(MachineCPU.stealShare(from: before, to: before) == nil)
        // 400 ticks pass, the host takes 100 of them: 300 left, 150 of them busy.
        let stolen = MachineCPU(busyTicks: 1_150, stealTicks: 100, totalTicks: 4_400)
        #expect(MachineCPU.busyShare(from: before, to: stolen) == 0.5)
        #expect(MachineCPU.stealShare(from: before, to: stolen) == 0.25)
        // All of it stolen: nothing was had, so no busy share.
        let allStolen = MachineCPU(busyTicks: 1_000, stealTicks: 10, totalTicks: 4_010)
        #expect(MachineCPU.busyShare(from: before, to: allStolen) == nil)
    }

    @Test("per command: this process's time, the machine's, and the bound they give")
    func perCommand() throws {
        let me = getpid()
        let clocks = ProcessorTimes(workerPid: me, queryPid: me)
        // Burn 50 ms of this process's processor time (ticks are 10 ms), however loaded the
        // machine is: the spin ends on the process's own clock, not the wall's.
        let start = try #require(ProcessCPU.of(0)).seconds
        var spin: UInt64 = 1
        while (ProcessCPU.of(0)?.seconds ?? .infinity) - start < 0.05 {
            for _ in 0..<10_000 { spin = spin &* 6_364_136_223_846_793_005 &+ 1 }
        }
        #expect(spin != 0)
        let figures = Dictionary(uniqueKeysWithValues: clocks.perCommand(1_000))
        let worker = try #require(figures["workerCPUMicrosecondsPerCommand"])
        #expect(worker >= 20)  // ≥ 20 ms over 1,000 commands
        // Both clocks are this process's, read one after the other while other tests run on
        // other threads: they may be a tick apart at each end (10 µs a command here each).
        let query = try #require(figures["queryCPUMicrosecondsPerCommand"])
        #expect(abs(query - worker) <= 40, "worker \(worker), query \(query)")
        let machine = try #require(figures["machineCPUMicrosecondsPerCommand"])
        #expect(machine >= 20)
        let bound = try #require(figures["processorBoundPerSecond"])
        let steal = try #require(figures["machineStealPercent"])
        #expect(steal >= 0 && steal <= 100)
        let processors = Double(ProcessInfo.processInfo.activeProcessorCount) * (1 - steal / 100)
        // machine and steal are rounded to one decimal: allow for it.
        #expect(abs(bound - processors * 1e6 / machine) <= bound * 0.01 + 1)
        #expect(try #require(figures["machineBusyPercent"]) > 0)
        #expect(clocks.perCommand(0).isEmpty)
        let perEvent = Dictionary(uniqueKeysWithValues: clocks.perProcess(100_000, per: "Event", decimals: 2))
        #expect(perEvent.keys.sorted() == ["queryCPUMicrosecondsPerEvent", "workerCPUMicrosecondsPerEvent"])
        #expect(try #require(perEvent["workerCPUMicrosecondsPerEvent"]) >= 0.2)
    }
}
