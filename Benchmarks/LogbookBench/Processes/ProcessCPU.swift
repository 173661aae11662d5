import Foundation
import Glibc

/// The processor time a process has used so far (user + system, `/proc/PID/stat`), to tell
/// whether a server was busy all the time a figure was measured or waited for something.
struct ProcessCPU: Sendable, Equatable {
    var seconds: Double

    /// `pid` 0 reads the bench's own process.
    static func of(_ pid: Int32) -> ProcessCPU? {
        let path = pid == 0 ? "/proc/self/stat" : "/proc/\(pid)/stat"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return parse(stat: text, ticksPerSecond: ProcessStat.ticksPerSecond)
    }

    /// Reads utime and stime (fields 14 and 15) from the text of a `/proc/PID/stat` file.
    static func parse(stat text: String, ticksPerSecond: Double) -> ProcessCPU? {
        ProcessStat.parse(stat: text, ticksPerSecond: ticksPerSecond).map { ProcessCPU(seconds: $0.seconds) }
    }

    /// The share of one processor used between two readings `elapsed` seconds apart, in percent.
    static func percent(from before: ProcessCPU?, to after: ProcessCPU?, over elapsed: Double) -> Double? {
        guard let before, let after, elapsed > 0 else { return nil }
        return ((after.seconds - before.seconds) / elapsed * 1000).rounded() / 10
    }
}
