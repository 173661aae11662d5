import Foundation

/// Where the processors went while a load ran: the processor time per answered command of
/// the worker, the query process (which follows the feed) and the bench's own clients, and of
/// the whole machine (those three, the kernel's work for them, and anything else running).
/// On a machine that was near 100 % busy, `processors ÷ machine time per command` is the
/// most commands a second it could have answered: how close the measured rate is to it says
/// whether the processors were the limit.
struct CommandProcessorTime {
    private let worker: ProcessCPU?
    private let query: ProcessCPU?
    private let bench: ProcessCPU?
    private let machine: MachineCPU?

    /// Reads the clocks now, before the load.
    init(workerPid: Int32, queryPid: Int32) {
        worker = ProcessCPU.of(workerPid)
        query = ProcessCPU.of(queryPid)
        bench = ProcessCPU.of(0)
        machine = MachineCPU.now()
    }

    /// The details since `init`, for `commands` answered; processes that cannot be read are left out.
    func details(commands: Int, workerPid: Int32, queryPid: Int32) -> [(String, Double)] {
        guard commands > 0 else { return [] }
        var figures: [(String, Double)] = []
        for (key, before, after) in [
            ("workerCPUMicrosecondsPerCommand", worker, ProcessCPU.of(workerPid)),
            ("queryCPUMicrosecondsPerCommand", query, ProcessCPU.of(queryPid)),
            ("benchCPUMicrosecondsPerCommand", bench, ProcessCPU.of(0)),
        ] {
            guard let before, let after else { continue }
            figures.append((key, Self.rounded((after.seconds - before.seconds) * 1e6 / Double(commands))))
        }
        guard let machine, let now = MachineCPU.now() else { return figures }
        let busySeconds = (now.busyTicks - machine.busyTicks) / ProcessStat.ticksPerSecond
        let machineMicros = busySeconds * 1e6 / Double(commands)
        figures.append(("machineCPUMicrosecondsPerCommand", Self.rounded(machineMicros)))
        if let share = MachineCPU.busyShare(from: machine, to: now) {
            figures.append(("machineBusyPercent", Self.rounded(share * 100)))
        }
        if machineMicros > 0 {
            let processors = Double(ProcessInfo.processInfo.activeProcessorCount)
            figures.append(("processorBoundPerSecond", (processors * 1e6 / machineMicros).rounded()))
        }
        return figures
    }

    private static func rounded(_ value: Double) -> Double { (value * 10).rounded() / 10 }
}
