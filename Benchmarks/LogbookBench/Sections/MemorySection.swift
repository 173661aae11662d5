import Foundation
import LogbookJSON
import LogbookZMQ

extension BenchSession {
    /// Section 5: peak resident memory (VmHWM) of the worker and the query process after
    /// everything before it ran: the generated log read and rebuilt, the command load.
    mutating func measureMemory() throws(BenchError) {
        let service = try runningService()
        let head = try status(of: service.endpoints.commands)["head"]?.intValue ?? 0
        let logBytes = (try? FileManager.default.attributesOfItem(atPath: serviceDirectory + "/events.sqlite3")[.size])
            .flatMap { $0 as? Int }
        var details: JSONObject = ["logEvents": .int(head)]
        if let streams = facts.generated?.streams { details["generatedStreams"] = .int(streams) }
        if let logBytes { details["logFileMB"] = .double(Double(logBytes) / 1_048_576) }
        for (role, pid) in [("worker", service.workerPid), ("query process", service.queryPid)] {
            guard let memory = ProcessMemory.of(pid) else { throw BenchError("cannot read /proc/\(pid)/status") }
            var figureDetails = details
            figureDetails["currentMB"] = .double(Double(memory.currentKilobytes) / 1024)
            figures.append(
                BenchFigure(
                    section: "memory", name: "\(role) peak RSS (VmHWM)", value: Double(memory.peakKilobytes) / 1024,
                    unit: .megabytes, target: .init(.atMost, 100, "< 100 MB (goal < 64 MB)"),
                    details: figureDetails))
        }
    }
}
