import Foundation
import Glibc

/// The fields of one `/proc/PID/stat` line the bench reads: the parent's pid, the
/// processor time the process used (utime + stime) and what its children that ended and
/// were waited for used (cutime + cstime), in seconds.
struct ProcessStat: Sendable, Equatable {
    var parent: Int32
    var seconds: Double
    var childrenSeconds: Double

    static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    static func of(_ pid: Int32) -> ProcessStat? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return nil }
        return parse(stat: text, ticksPerSecond: ticksPerSecond)
    }

    /// Reads ppid (field 4), utime, stime, cutime and cstime (fields 14 to 17); the command
    /// name in parentheses may itself hold spaces and parentheses.
    static func parse(stat text: String, ticksPerSecond: Double) -> ProcessStat? {
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 14, let parent = Int32(fields[1]) else { return nil }
        let times = fields[11...14].compactMap { Double($0) }
        guard times.count == 4 else { return nil }
        return ProcessStat(
            parent: parent, seconds: (times[0] + times[1]) / ticksPerSecond,
            childrenSeconds: (times[2] + times[3]) / ticksPerSecond)
    }
}

/// The processor time of a server and every process it forked (PostgreSQL's postmaster and
/// its backends and helpers): the server's own, its ended children's (counted when it
/// reaped them), and each live child's, so a backend that ends during a measurement still
/// counts. Processes in `excluding` (the bench's own sampling connection) are left out
/// while they live.
enum ProcessTreeCPU {
    static func seconds(of root: Int32, excluding: Set<Int32> = []) -> Double? {
        byProcess(of: root).map { reading in
            reading.filter { !excluding.contains($0.key) }.values.reduce(0, +)
        }
    }

    /// The same, process by process: the server's own and its ended children's under its
    /// pid, each live child's under the child's. Nil when the server is gone.
    static func byProcess(of root: Int32) -> [Int32: Double]? {
        guard let server = ProcessStat.of(root) else { return nil }
        var reading = [root: server.seconds + server.childrenSeconds]
        for pid in childPids(of: root) {
            if let child = ProcessStat.of(pid) { reading[pid] = child.seconds + child.childrenSeconds }
        }
        return reading
    }

    /// The live processes whose parent is `root`.
    static func childPids(of root: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { ProcessStat.of($0)?.parent == root }
    }
}

/// The whole machine's processor time from the first line of `/proc/stat`, in ticks: busy
/// (user, nice, system, irq, softirq), stolen (steal: time this virtual machine's processors
/// were ready to run while the host ran something else) and all. Two readings give the
/// share of the processor time the machine had that was busy meanwhile, whoever used it,
/// and the share the host took.
struct MachineCPU: Sendable, Equatable {
    var busyTicks: Double
    var stealTicks: Double = 0
    var totalTicks: Double

    static func now() -> MachineCPU? {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8) else { return nil }
        return parse(procStat: text)
    }

    /// `cpu  user nice system idle iowait irq softirq steal …` (guest time is already in user).
    static func parse(procStat text: String) -> MachineCPU? {
        guard let line = text.split(separator: "\n").first, line.hasPrefix("cpu ") else { return nil }
        let values = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard values.count >= 8 else { return nil }
        let busy = values[0] + values[1] + values[2] + values[5] + values[6]
        return MachineCPU(busyTicks: busy, stealTicks: values[7], totalTicks: busy + values[3] + values[4] + values[7])
    }

    /// The share (0…1) of the processor time the machine had (all of it but the stolen) that
    /// was busy between two readings.
    static func busyShare(from before: MachineCPU?, to after: MachineCPU?) -> Double? {
        guard let before, let after else { return nil }
        let had = (after.totalTicks - before.totalTicks) - (after.stealTicks - before.stealTicks)
        guard had > 0 else { return nil }
        return (after.busyTicks - before.busyTicks) / had
    }

    /// The share (0…1) of all processor time between two readings that the host took (steal).
    static func stealShare(from before: MachineCPU?, to after: MachineCPU?) -> Double? {
        guard let before, let after, after.totalTicks > before.totalTicks else { return nil }
        return (after.stealTicks - before.stealTicks) / (after.totalTicks - before.totalTicks)
    }
}
