import LogbookJSON
import LogbookWire
import LogbookZMQ

extension BenchSession {
    /// Section 4: reading the whole log through `ReadLog` (pages of 10,000), a full rebuild
    /// of every read model, and the catch-up of the fresh query process at start, each
    /// against a bare sequential read of the same SQLite table.
    mutating func measureReplay() throws(BenchError) {
        let service = try runningService()
        let logPath = serviceDirectory + "/events.sqlite3"
        progress("bench: bare sequential read of the events table")
        let bare = try SQLiteReadBaseline.rowsPerSecond(logPath: logPath)
        let baseline = BenchFigure.Baseline("bare SQLite sequential read", bare.perSecond)

        let workerPeakBefore = ProcessMemory.of(service.workerPid)?.peakKilobytes
        progress("bench: ReadLog, the whole log in pages of 10,000")
        let readCPU = ProcessorTimes(workerPid: service.workerPid, queryPid: service.queryPid)
        let streamed = try readWholeLog(service.endpoints.log)
        // Which step drives the peak memory figures: the worker's before and after paging.
        var readDetails: JSONObject = [
            "events": .int(streamed.events), "pages": .int(streamed.pages), "seconds": .double(streamed.seconds),
            "megabytesPerSecond": .double(streamed.megabytesPerSecond),
        ]
        if let before = workerPeakBefore, let after = ProcessMemory.of(service.workerPid)?.peakKilobytes {
            readDetails["workerPeakMBBefore"] = .double(Double(before) / 1024)
            readDetails["workerPeakMBAfter"] = .double(Double(after) / 1024)
        }
        for (key, value) in readCPU.perProcess(streamed.events, per: "Event", decimals: 2) {
            readDetails[key] = .double(value)
        }
        figures.append(
            BenchFigure(
                section: "replay", name: "ReadLog streaming, events/s", value: streamed.perSecond, unit: .perSecond,
                baselines: [baseline], target: .init(.atLeast, 1_000_000, "≥ 1,000,000/s"), details: readDetails))

        let queryPeakBefore = ProcessMemory.of(service.queryPid)?.peakKilobytes
        progress("bench: rebuild of all read models")
        let rebuildCPU = ProcessorTimes(workerPid: service.workerPid, queryPid: service.queryPid)
        let rebuild = try rebuildReadModels(service.endpoints.queries)
        var rebuildDetails: JSONObject = ["events": .int(rebuild.events), "seconds": .double(rebuild.seconds)]
        for (key, value) in rebuildCPU.perProcess(rebuild.events, per: "Event", decimals: 2) {
            rebuildDetails[key] = .double(value)
        }
        // Seen only when a Status poll falls between the end of the filling and the switch.
        if let fill = rebuild.fillSeconds { rebuildDetails["fillSeconds"] = .double(fill) }
        if let before = queryPeakBefore, let after = ProcessMemory.of(service.queryPid)?.peakKilobytes {
            rebuildDetails["queryPeakMBBefore"] = .double(Double(before) / 1024)
            rebuildDetails["queryPeakMBAfter"] = .double(Double(after) / 1024)
        }
        if let generated = facts.generated {
            rebuildDetails["generatedStreams"] = .int(generated.streams)
            rebuildDetails["generatorEventsPerSecond"] = .double(Double(generated.events) / generated.seconds)
        }
        figures.append(
            BenchFigure(
                section: "replay", name: "full rebuild of all read models, events/s", value: rebuild.perSecond,
                unit: .perSecond, baselines: [baseline],
                target: .init(.atLeast, 500_000, "≥ 500,000/s (goal 1,000,000/s)"), details: rebuildDetails))

        if service.catchUpEvents > 0 {
            figures.append(
                BenchFigure(
                    section: "replay", name: "query process catch-up at start, events/s",
                    value: Double(service.catchUpEvents) / service.catchUpSeconds, unit: .perSecond,
                    baselines: [baseline],
                    note: "from spawning the process until its Status shows the worker's head",
                    details: ["events": .int(service.catchUpEvents), "seconds": .double(service.catchUpSeconds)]))
        }
    }

    private struct StreamedLog {
        var events = 0
        var pages = 0
        var bytes = 0
        var seconds = 0.0

        var perSecond: Double { seconds > 0 ? Double(events) / seconds : 0 }
        var megabytesPerSecond: Double { seconds > 0 ? Double(bytes) / 1_048_576 / seconds : 0 }
    }

    /// Reads every page from position 1 until a reply's `next` is beyond its `head`. The
    /// client does not decode the events: it reads `next` and `head` off the end of each
    /// page, so the figure is the service's rate, not this client's JSON parser's.
    private func readWholeLog(_ endpoint: String) throws(BenchError) -> StreamedLog {
        var client = try ControlClient(context, endpoint: endpoint)
        var streamed = StreamedLog()
        var from = 1
        let started = BenchClock.nanoseconds()
        while true {
            guard
                let page = try client.requestBytes(
                    .readLog, ["from": .int(from), "limit": 10_000], timeoutMilliseconds: 60_000)
            else { throw BenchError("ReadLog from \(from) got no reply within 60 s") }
            guard let next = PageTail.integer("next", in: page), let head = PageTail.integer("head", in: page) else {
                throw BenchError(
                    "ReadLog from \(from) did not answer a page: \(String(decoding: page.prefix(300), as: UTF8.self))")
            }
            streamed.pages += 1
            streamed.bytes += page.count
            streamed.events += next - from
            guard next > from || next > head else { throw BenchError("ReadLog did not move past \(from)") }
            from = next
            if next > head { break }
        }
        streamed.seconds = BenchClock.seconds(since: started)
        return streamed
    }

    private struct Rebuild {
        var events: Int
        var seconds: Double
        var fillSeconds: Double?

        var perSecond: Double { seconds > 0 ? Double(events) / seconds : 0 }
    }

    /// Sends `Rebuild` and polls `Status` until the query process has switched to the new
    /// generation; the time is from the request to the first `Status` showing the switch.
    private func rebuildReadModels(_ endpoint: String) throws(BenchError) -> Rebuild {
        var client = try ControlClient(context, endpoint: endpoint)
        guard let before = try client.status(timeoutMilliseconds: 10_000) else {
            throw BenchError("the query process did not answer Status")
        }
        let oldGeneration = before["generation"]?.intValue ?? 0
        let started = BenchClock.nanoseconds()
        guard let reply = try client.request(.rebuild, timeoutMilliseconds: 10_000), reply["ok"] == .bool(true) else {
            throw BenchError("the query process did not accept Rebuild")
        }
        var fillSeconds: Double?
        let deadline = started + 600_000_000_000
        while BenchClock.nanoseconds() < deadline {
            BenchClock.sleep(milliseconds: options.quick ? 5 : 10)
            guard let status = try client.status(timeoutMilliseconds: 10_000) else { continue }
            let rebuild = status["rebuild"]?.objectValue ?? [:]
            switch rebuild["state"]?.stringValue {
            case "failed":
                throw BenchError("the rebuild failed: \(rebuild["reason"]?.stringValue ?? "no reason given")")
            case "switching":
                fillSeconds = fillSeconds ?? BenchClock.seconds(since: started)
            case "idle" where (status["generation"]?.intValue ?? 0) > oldGeneration:
                return Rebuild(
                    events: status["checkpoint"]?.intValue ?? 0, seconds: BenchClock.seconds(since: started),
                    fillSeconds: fillSeconds)
            default:
                continue
            }
        }
        throw BenchError("the rebuild did not finish within 10 minutes")
    }
}
