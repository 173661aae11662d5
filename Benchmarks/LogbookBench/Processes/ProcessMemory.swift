import Foundation

/// The memory figures Linux keeps for a process in `/proc/PID/status`.
struct ProcessMemory: Sendable, Equatable {
    /// The peak resident set size (VmHWM), in kilobytes.
    var peakKilobytes: Int
    /// The resident set size now (VmRSS), in kilobytes.
    var currentKilobytes: Int

    static func of(_ pid: Int32) -> ProcessMemory? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        return parse(status: text)
    }

    /// Reads VmHWM and VmRSS out of the text of a `/proc/PID/status` file.
    static func parse(status text: String) -> ProcessMemory? {
        func kilobytes(_ key: String) -> Int? {
            for line in text.split(separator: "\n") where line.hasPrefix(key + ":") {
                return line.dropFirst(key.count + 1).split(separator: " ").compactMap { Int($0) }.first
            }
            return nil
        }
        guard let peak = kilobytes("VmHWM"), let current = kilobytes("VmRSS") else { return nil }
        return ProcessMemory(peakKilobytes: peak, currentKilobytes: current)
    }
}
