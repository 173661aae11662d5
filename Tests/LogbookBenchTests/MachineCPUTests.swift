import Foundation
import Testing

@testable import LogbookBench

@Suite("Bench: the machine's processor time and the processor time per command")
struct MachineCPUTests {
    @Test("busy is user, nice, system, irq, softirq and steal; the total adds idle and iowait")
    func parsesTheCPULine() throws {
        let text = """
            cpu  100 5 40 800 20 3 2 1 0 0
            cpu0 50 2 20 400 10 1 1 0 0 0
            intr 12345
            """
        let reading = try #require(MachineCPU.parse(procStat: text))
        #expect(reading.busyTicks == 151)
        #expect(reading.totalTicks == 971)
    }

    @Test("a line that is not the all-processors line, or too short, is not read")
    func refusesOtherText() {
        #expect(MachineCPU.parse(procStat: "cpu0 1 2 3 4 5 6 7 8\n") == nil)
        #expect(MachineCPU.parse(procStat: "cpu  1 2 3\n") == nil)
        #expect(MachineCPU.parse(procStat: "") == nil)
    }

    @Test("the busy share between two readings")
    func busyShare() {
        let before = MachineCPU(busyTicks: 1_000, totalTicks: 4_000)
        let after = MachineCPU(busyTicks: 1_150, totalTicks: 4_200)
        #expect(MachineCPU.busyShare(from: before, to: after) == 0.75)
        #expect(MachineCPU.busyShare(from: before, to: before) == nil)
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
        let processors = Double(ProcessInfo.processInfo.activeProcessorCount)
        #expect(abs(bound - processors * 1e6 / machine) <= bound * 0.01 + 1)
        #expect(try #require(figures["machineBusyPercent"]) > 0)
        #expect(clocks.perCommand(0).isEmpty)
        let perEvent = Dictionary(uniqueKeysWithValues: clocks.perProcess(100_000, per: "Event", decimals: 2))
        #expect(perEvent.keys.sorted() == ["queryCPUMicrosecondsPerEvent", "workerCPUMicrosecondsPerEvent"])
        #expect(try #require(perEvent["workerCPUMicrosecondsPerEvent"]) >= 0.2)
    }
}
