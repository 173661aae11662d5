import Foundation

/// Where the processors went while a figure was measured: the processor time of the worker
/// and the query process per unit of work (an event replayed, a command answered), steadier
/// than the wall time on a machine shared with other work; for a command load also the
/// bench's own clients' and the whole machine's (those three, the kernel's work for them,
/// and anything else running). On a machine that was near 100 % busy, `processors ÷ machine
/// time per command` is the most commands a second it could have answered: how close the
/// measured rate is to it says whether the processors were the limit.
struct ProcessorTimes {
    private let workerPid: Int32
    private let queryPid: Int32
    private let worker: ProcessCPU?
    private let query: ProcessCPU?
    private let bench: ProcessCPU?
    private let machine: MachineCPU?

    /// Reads the clocks now, before the work.
    init(workerPid: Int32, queryPid: Int32) {
        self.workerPid = workerPid
        self.queryPid = queryPid
        worker = ProcessCPU.of(workerPid)
        query = ProcessCPU.of(queryPid)
        bench = ProcessCPU.of(0)
        machine = MachineCPU.now()
    }

    /// The worker's and the query process's microseconds per one of `count` units since
    /// `init`, as `workerCPUMicrosecondsPer<unit>` and `queryCPUMicrosecondsPer<unit>` to
    /// `decimals` places; a process that cannot be read is left out.
    func perProcess(_ count: Int, per unit: String, decimals: Int) -> [(String, Double)] {
        perProcess(count, per: unit, decimals: decimals, [("worker", worker, workerPid), ("query", query, queryPid)])
    }

    /// For `commands` answered since `init`: `perProcess` and the bench's clients' time per
    /// command (one decimal), the machine's (steal not counted), how busy it was, the share
    /// of its processor time the host took, and `processorBoundPerSecond`.
    func perCommand(_ commands: Int) -> [(String, Double)] {
        guard commands > 0 else { return [] }
        var figures = perProcess(
            commands, per: "Command", decimals: 1,
            [("worker", worker, workerPid), ("query", query, queryPid), ("bench", bench, 0)])
        guard let machine, let now = MachineCPU.now() else { return figures }
        let busySeconds = (now.busyTicks - machine.busyTicks) / ProcessStat.ticksPerSecond
        let machineMicros = busySeconds * 1e6 / Double(commands)
        figures.append(("machineCPUMicrosecondsPerCommand", Self.rounded(machineMicros, decimals: 1)))
        if let share = MachineCPU.busyShare(from: machine, to: now) {
            figures.append(("machineBusyPercent", Self.rounded(share * 100, decimals: 1)))
        }
        let stolen = MachineCPU.stealShare(from: machine, to: now) ?? 0
        figures.append(("machineStealPercent", Self.rounded(stolen * 100, decimals: 1)))
        if machineMicros > 0 {
            // The processors the host left this machine: with steal, fewer than it has.
            let processors = Double(ProcessInfo.processInfo.activeProcessorCount) * (1 - stolen)
            figures.append(("processorBoundPerSecond", (processors * 1e6 / machineMicros).rounded()))
        }
        return figures
    }

    private func perProcess(
        _ count: Int, per unit: String, decimals: Int, _ processes: [(name: String, before: ProcessCPU?, pid: Int32)]
    ) -> [(String, Double)] {
        guard count > 0 else { return [] }
        return processes.compactMap { name, before, pid in
            guard let before, let after = ProcessCPU.of(pid) else { return nil }
            let micros = (after.seconds - before.seconds) * 1e6 / Double(count)
            return ("\(name)CPUMicrosecondsPer\(unit)", Self.rounded(micros, decimals: decimals))
        }
    }

    private static func rounded(_ value: Double, decimals: Int) -> Double {
        let scale = pow(10, Double(decimals))
        return (value * scale).rounded() / scale
    }
}
