import LogbookJSON
import LogbookZMQ

extension BenchSession {
    /// Section 1: durable command throughput with 1, 8, 64 … pipelined clients, each run
    /// beside the same number of rows inserted straight into SQLite (batches of 100 and of
    /// the worker's mean batch) and a bare libzmq echo with the same clients, window and
    /// message sizes.
    mutating func measureThroughput() throws(BenchError) {
        for (index, clients) in options.clients.enumerated() {
            let service = try runningService()
            let tag = "t\(index)\(runTag)"
            let seeded = max(4, options.window)
            progress("bench: throughput with \(clients) client\(clients == 1 ? "" : "s") (seeding)")
            try seed(tag: tag, clients: clients, seeded: seeded)
            let before = try status(of: service.endpoints.commands)
            progress("bench: throughput with \(clients) client\(clients == 1 ? "" : "s")")
            let cpuBefore = (worker: ProcessCPU.of(service.workerPid), bench: ProcessCPU.of(0))
            let perCommand = ProcessorTimes(workerPid: service.workerPid, queryPid: service.queryPid)
            let result = try load(
                LoadPlan(
                    endpoint: service.endpoints.commands, clients: clients, threads: options.loadThreads,
                    pacing: .closedLoop(window: options.window), length: .seconds(options.secondsPerRun),
                    requests: CommandMix(tag: tag, seeded: seeded)))
            let cpu = (
                worker: ProcessCPU.percent(
                    from: cpuBefore.worker, to: ProcessCPU.of(service.workerPid), over: result.seconds),
                bench: ProcessCPU.percent(from: cpuBefore.bench, to: ProcessCPU.of(0), over: result.seconds)
            )
            let processorTimes = perCommand.perCommand(result.completed)
            let after = try status(of: service.endpoints.commands)
            let batch = WorkerBatches(before: before, after: after)
            facts.throughput[clients] = result.perSecond
            facts.requestBytes = result.meanRequestBytes
            facts.replyBytes = result.meanReplyBytes
            if batch.events > 0 {
                // A reply is `{"id","ok","position","events":[…]}`: about 60 bytes around its envelopes.
                facts.envelopeBytes = max(100, (result.replyBytes - 60 * result.completed) / batch.events)
            }

            progress("bench: baselines for \(clients) client\(clients == 1 ? "" : "s"): libzmq echo, SQLite inserts")
            let echo = try EchoServer(replySize: result.meanReplyBytes)
            let echoResult = try load(
                LoadPlan(
                    endpoint: echo.endpoint, clients: clients, threads: options.loadThreads,
                    pacing: .closedLoop(window: options.window), length: .seconds(options.secondsPerRun),
                    requests: EchoRequests(size: result.meanRequestBytes)))
            if let failure = echo.stop() { throw BenchError("the echo server failed: \(failure)") }
            let rowBytes = facts.envelopeBytes ?? 400
            let rows = max(result.completed, 1)
            let mean = max(1, Int(batch.meanSize.rounded()))
            let batched100 = try SQLiteInsertBaseline.rowsPerSecond(
                rows: rows, batch: 100, rowBytes: rowBytes, directory: baselineDirectory)
            let batchedMean = try SQLiteInsertBaseline.rowsPerSecond(
                rows: rows, batch: mean, rowBytes: rowBytes, directory: baselineDirectory)

            var details: JSONObject = [
                "commands": .int(result.completed), "seconds": .double(result.seconds),
                "meanBatch": .double(batch.meanSize), "rejected": .int(result.rejected),
                "eventsAppended": .int(batch.events),
            ]
            if !result.rejections.isEmpty {
                details["rejections"] = .object(
                    JSONObject(result.rejections.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) }))
            }
            if let latency = LatencySummary(nanoseconds: result.latencies) {
                details["latencyP50Ms"] = .double(latency.p50 / 1000)
                details["latencyP99Ms"] = .double(latency.p99 / 1000)
            }
            // Of one processor: a worker near 100% was busy all along; far below, it waited
            // (for the clients, the disk, or a processor other programs held).
            details["workerCPUPercent"] = cpu.worker.map(JSONValue.double) ?? .null
            details["benchCPUPercent"] = cpu.bench.map(JSONValue.double) ?? .null
            // Processor time per command: what each process costs, whoever else shares the
            // machine, and the whole machine's (the most it could answer, were it all this work).
            for (key, value) in processorTimes { details[key] = .double(value) }
            details["requestBytes"] = .int(result.meanRequestBytes)
            details["replyBytes"] = .int(result.meanReplyBytes)
            figures.append(
                BenchFigure(
                    section: "throughput",
                    name: "commands/s, \(clients) client\(clients == 1 ? "" : "s") × \(options.window) in flight",
                    value: result.perSecond, unit: .perSecond,
                    baselines: [
                        .init("SQLite inserts, batches of 100", batched100),
                        .init("SQLite inserts, batches of \(mean) (worker's mean)", batchedMean),
                        .init("bare libzmq echo, same clients", echoResult.perSecond),
                    ],
                    target: clients == 64 ? .init(.atLeast, 30_000, "≥ 30,000/s") : nil,
                    note: result.unanswered > 0 ? "\(result.unanswered) commands got no reply" : nil,
                    details: details))
        }
    }
}
