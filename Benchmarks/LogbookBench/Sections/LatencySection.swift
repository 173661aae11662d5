import LogbookJSON
import LogbookZMQ

extension BenchSession {
    /// Section 2: command latency for one client with one command in flight, then for
    /// several clients paced (open loop) at half the peak throughput, each against the bare
    /// libzmq round trip of the same run and against 3 × that round trip + one fsync.
    mutating func measureLatency() throws(BenchError) {
        let service = try runningService()
        progress("bench: latency baselines (fsync, bare round trip)")
        let fsyncSamples = try FsyncProbe.samples(count: options.quick ? 200 : 2_000, directory: serviceDirectory)
        guard let fsync = LatencySummary(nanoseconds: fsyncSamples) else { throw BenchError("no fsync measured") }
        facts.fsyncMicroseconds = fsync.p50
        let roundTrip = try bareRoundTrip(samples: options.latencySamples)
        facts.roundTrip = roundTrip
        let threshold = 3 * roundTrip.p50 + fsync.p50
        let target = BenchFigure.Target(
            .atMost, threshold, "≤ 3 × round trip + fsync = \(NumberFormat.value(threshold, .microseconds))")
        figures.append(
            BenchFigure(
                section: "latency", name: "fsync (write + fdatasync of 4 KiB), p50", value: fsync.p50,
                unit: .microseconds, details: ["p99Us": .double(fsync.p99), "samples": .int(fsync.count)]))

        let tag = "l\(runTag)"
        let seeded = max(4, options.window)
        try seed(tag: tag, clients: 8, seeded: seeded)
        progress("bench: latency, one client, one command in flight")
        var cpuBefore = ProcessorTimes(workerPid: service.workerPid, queryPid: service.queryPid)
        let single = try load(
            LoadPlan(
                endpoint: service.endpoints.commands, clients: 1, threads: 1, pacing: .closedLoop(window: 1),
                length: .requestsPerClient(options.latencySamples), requests: CommandMix(tag: tag, seeded: seeded)))
        guard let one = LatencySummary(nanoseconds: single.latencies) else { throw BenchError("no command answered") }
        addLatencyFigures(
            "1 client", one, roundTrip: roundTrip, target: target,
            details: JSONObject(
                [("samples", .int(one.count)), ("rejected", .int(single.rejected))]
                    + processorTimes(since: cpuBefore, single)))

        // Half the peak: measured above, or measured now with the largest client count.
        let peak: Double
        if let measured = facts.peakThroughput {
            peak = measured
        } else {
            progress("bench: latency, finding the peak throughput first")
            let probe = try load(
                LoadPlan(
                    endpoint: service.endpoints.commands, clients: 8, threads: options.loadThreads,
                    pacing: .closedLoop(window: options.window), length: .seconds(options.secondsPerRun),
                    requests: CommandMix(tag: tag + "p", seedTag: tag, seeded: seeded)))
            peak = probe.perSecond
        }
        let rate = peak / 2
        progress("bench: latency at half the peak, \(Int(rate)) commands/s from 8 clients")
        cpuBefore = ProcessorTimes(workerPid: service.workerPid, queryPid: service.queryPid)
        let paced = try load(
            LoadPlan(
                endpoint: service.endpoints.commands, clients: 8, threads: options.loadThreads,
                pacing: .paced(perSecond: rate, maximumInFlight: 1_000), length: .seconds(options.secondsPerRun),
                requests: CommandMix(tag: tag + "h", seedTag: tag, seeded: seeded)))
        guard let half = LatencySummary(nanoseconds: paced.latencies) else { throw BenchError("no command answered") }
        addLatencyFigures(
            "half the peak (\(NumberFormat.grouped(paced.perSecond))/s, 8 clients)", half, roundTrip: roundTrip,
            target: target,
            details: JSONObject(
                [
                    ("offeredPerSecond", .double(rate)), ("achievedPerSecond", .double(paced.perSecond)),
                    ("samples", .int(half.count)), ("rejected", .int(paced.rejected)),
                ] + processorTimes(since: cpuBefore, paced)))
    }

    /// Each process's and the machine's processor time per answered command since `before`.
    private func processorTimes(since before: ProcessorTimes, _ result: LoadResult) -> [(String, JSONValue)] {
        before.perCommand(result.completed).map { ($0.0, .double($0.1)) }
    }

    private mutating func addLatencyFigures(
        _ load: String, _ summary: LatencySummary, roundTrip: LatencySummary, target: BenchFigure.Target,
        details: JSONObject
    ) {
        let rows: [(String, Double, Double)] = [
            ("p50", summary.p50, roundTrip.p50), ("p99", summary.p99, roundTrip.p99),
            ("p99.9", summary.p999, roundTrip.p999),
        ]
        for (index, (name, value, bare)) in rows.enumerated() {
            figures.append(
                BenchFigure(
                    section: "latency", name: "command latency \(name), \(load)", value: value, unit: .microseconds,
                    baselines: [.init("bare libzmq round trip \(name)", bare)], target: index == 0 ? target : nil,
                    details: index == 0 ? details : [:]))
        }
    }
}
