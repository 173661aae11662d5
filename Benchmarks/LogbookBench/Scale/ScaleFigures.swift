import LogbookJSON

/// The rows of the scale section, from what its steps measured: per number of workers,
/// commands/s beside PostgreSQL's own committed INSERTs (and one worker's figure; for one
/// worker, a SQLite worker's), processor
/// time per command of every process, commands decided again, the head-row lock's share of
/// wall time, feed latency; then the capacity model's predictions beside the measured figures.
struct ScaleFigures {
    /// PostgreSQL's own commit-per-insert at the same concurrency, run before the steps and
    /// after them, with its processes' processor seconds per insert.
    struct Baseline: Sendable {
        var perSecond: Double
        var postgresCPUPerInsert: Double?
    }

    var steps: [ScaleStep]
    var before: Baseline
    var after: Baseline
    /// Commands/s of one SQLite worker under the same load, in the same run.
    var sqliteWorker: Double?
    var clients: Int
    var window: Int
    var processors: Double
    var roundTrip: LatencySummary?

    static let section = "scale"

    var baselinePerSecond: Double { (before.perSecond + after.perSecond) / 2 }

    var figures: [BenchFigure] {
        var rows: [BenchFigure] = []
        for step in steps {
            rows += throughputRows(step) + costRows(step) + profileRows(step) + lockRows(step) + feedRows(step)
        }
        return rows + modelRows
    }

    private func label(_ workers: Int) -> String { "\(workers) worker\(workers == 1 ? "" : "s")" }

    private func throughputRows(_ step: ScaleStep) -> [BenchFigure] {
        var baselines: [BenchFigure.Baseline] = [
            .init("PostgreSQL INSERT + commit, \(clients) clients, before", before.perSecond),
            .init("PostgreSQL INSERT + commit, \(clients) clients, after", after.perSecond),
        ]
        let one = steps.first { $0.workers == 1 }
        if step.workers > 1, let one { baselines.append(.init("1 worker, same run", one.perSecond)) }
        if step.workers == 1, let sqliteWorker {
            baselines.append(.init("1 worker on SQLite, \(clients) clients, same run", sqliteWorker))
        }
        let target: BenchFigure.Target? =
            step.workers == 1
            ? .init(.atLeast, baselinePerSecond, "≥ PostgreSQL commit-per-insert")
            : one.map { .init(.atLeast, $0.perSecond, "≥ 1 worker") }
        var details: JSONObject = [
            "commands": .int(step.commands), "seconds": .double(step.seconds), "rejected": .int(step.rejected),
            "unanswered": .int(step.unanswered), "commandsPerWorker": .array(step.commandsPerWorker.map(JSONValue.int)),
            "meanBatch": .double(step.batches > 0 ? Self.round(Double(step.commands) / Double(step.batches)) : 0),
        ]
        if let p50 = step.latencyP50Ms, let p99 = step.latencyP99Ms {
            details["latencyP50Ms"] = .double(p50)
            details["latencyP99Ms"] = .double(p99)
        }
        details["measuredProcessesPercentOfMachine"] = .double(
            Self.round(100 * step.serviceShare(processors: processors)))
        if let busy = step.machineBusyShare { details["machineBusyPercent"] = .double(Self.round(100 * busy)) }
        return [
            BenchFigure(
                section: Self.section,
                name: "commands/s, \(label(step.workers)) on PostgreSQL, \(clients) clients × \(window)",
                value: step.perSecond, unit: .perSecond, baselines: baselines, target: target, details: details)
        ]
    }

    private func costRows(_ step: ScaleStep) -> [BenchFigure] {
        let costs = step.costs
        let perCommand = 1e6 / Double(max(step.commands, 1))
        let each = step.workerCPU.map { JSONValue.double(Self.round($0 * perCommand)) }
        let postgresBaseline = [before, after].compactMap(\.postgresCPUPerInsert)
        let name = "processor µs per command, \(label(step.workers))"
        return [
            BenchFigure(
                section: Self.section, name: "\(name): workers", value: costs.worker * 1e6, unit: .microseconds,
                details: [
                    "eachWorkerMicroseconds": .array(each),
                    "loadClientsMicroseconds": .double(Self.round(costs.load * 1e6)),
                ]),
            BenchFigure(
                section: Self.section, name: "\(name): PostgreSQL's processes", value: costs.postgres * 1e6,
                unit: .microseconds,
                baselines: postgresBaseline.isEmpty
                    ? []
                    : [
                        .init(
                            "per committed INSERT, baseline runs",
                            postgresBaseline.reduce(0, +) / Double(postgresBaseline.count) * 1e6)
                    ]),
            BenchFigure(
                section: Self.section, name: "\(name): feed process", value: costs.feed * 1e6, unit: .microseconds),
            BenchFigure(
                section: Self.section, name: "commands decided again after a conflict, \(label(step.workers))",
                value: 100 * step.decidedAgainShare, unit: .percent, details: ["decidedAgain": .int(step.decidedAgain)]),
        ]
    }

    /// PostgreSQL's processor time by kind of process, then its statements that took the most
    /// time, each per command of the step.
    private func profileRows(_ step: ScaleStep) -> [BenchFigure] {
        let perCommand = 1e6 / Double(max(step.commands, 1))
        let profile = step.postgresProfile
        var rows: [BenchFigure] = []
        if !profile.processorSeconds.isEmpty {
            var kinds = JSONObject()
            for (kind, seconds) in profile.processorSeconds.sorted(by: { $0.value > $1.value }) {
                kinds[kind] = .double(Self.round(seconds * perCommand))
            }
            rows.append(
                BenchFigure(
                    section: Self.section,
                    name: "PostgreSQL's processor µs per command by process, \(label(step.workers))",
                    value: profile.processorSeconds.values.reduce(0, +) * perCommand, unit: .microseconds,
                    note: "the sampler's backend included here", details: kinds))
        }
        for statement in profile.statements {
            rows.append(
                BenchFigure(
                    section: Self.section,
                    name: "statement µs per command, \(label(step.workers)): \(statement.query.prefix(48))",
                    value: statement.milliseconds / 1e3 * perCommand, unit: .microseconds,
                    note: "wall time, lock waits included; nested statements of logbook_append counted too",
                    details: [
                        "query": .string(statement.query),
                        "callsPerCommand": .double(Double(statement.calls) / Double(max(step.commands, 1))),
                        "rowsPerCall": .double(Self.round(Double(statement.rows) / Double(max(statement.calls, 1)))),
                        "blocksPerCall": .double(
                            Self.round(Double(statement.blocks) / Double(max(statement.calls, 1)))),
                    ]))
        }
        return rows
    }

    private func lockRows(_ step: ScaleStep) -> [BenchFigure] {
        let name = "head-row lock held, share of wall time, \(label(step.workers))"
        guard let lock = step.headLock, let held = lock.heldShare else {
            return [.skipped(section: Self.section, name: name, unit: .percent, because: "no samples")]
        }
        var details: JSONObject = ["samples": .int(lock.samples)]
        details["standardErrorPercent"] = .double(Self.round(100 * (lock.heldStandardError ?? 0)))
        details["contendedPercent"] = .double(Self.round(100 * (lock.contendedShare ?? 0)))
        details["meanWaiters"] = .double(Self.round(lock.meanWaiters ?? 0))
        details["serialMicrosecondsPerCommand"] = .double(Self.round(step.costs.serial * 1e6))
        if step.cpuSeconds > 0 {
            details["samplerBackendPercentOfOneProcessor"] = .double(
                Self.round(100 * step.samplerCPU / step.cpuSeconds))
        }
        return [
            BenchFigure(
                section: Self.section, name: name, value: 100 * held, unit: .percent,
                target: .init(.atMost, 100.0 / 3, "< 1/3 of wall time"),
                note: "sampled from pg_locks: a backend past its head update, until its commit", details: details)
        ]
    }

    private func feedRows(_ step: ScaleStep) -> [BenchFigure] {
        step.feed.enumerated().flatMap { index, run in
            feedRows(run, label: "\(label(step.workers))\(index > 0 ? " (half the peak)" : "")")
        }
    }

    private func feedRows(_ run: ScaleStep.FeedRun, label: String) -> [BenchFigure] {
        let at = "at \(NumberFormat.grouped(run.offered)) events/s, \(label)"
        guard let feed = run.delays else {
            return [
                .skipped(
                    section: Self.section, name: "feed reply → feed message \(at)", unit: .microseconds,
                    because: "no event of a reply arrived on the feed")
            ]
        }
        func bare(_ name: String, _ value: Double?) -> [BenchFigure.Baseline] {
            value.map { [.init("bare libzmq round trip \(name)", $0)] } ?? []
        }
        let details: JSONObject = [
            "offeredFeedEventsPerSecond": .double(run.offered), "feedEventsPerSecond": .double(feed.perSecond),
            "matched": .int(feed.matched), "sendToFeedP50Us": .double(feed.afterSend.p50),
            "sendToFeedP99Us": .double(feed.afterSend.p99),
        ]
        let overloaded =
            feed.perSecond < run.offered * 0.95
            ? "the service took \(NumberFormat.grouped(feed.perSecond)) of the events/s offered: "
                + "commands queued, and these times include the queue" : nil
        return [
            BenchFigure(
                section: Self.section, name: "feed reply → feed message, p50 \(at)", value: feed.afterReply.p50,
                unit: .microseconds, baselines: bare("p50", roundTrip?.p50), note: overloaded, details: details),
            BenchFigure(
                section: Self.section, name: "feed reply → feed message, p99 \(at)", value: feed.afterReply.p99,
                unit: .microseconds, baselines: bare("p99", roundTrip?.p99), target: .init(.atMost, 5_000, "< 5 ms")),
        ]
    }

    /// The model's predictions from the first step's costs: on this machine (beside the
    /// measured figure: the ratio is predicted ÷ measured) and with enough processors.
    private var modelRows: [BenchFigure] {
        guard let first = steps.first, first.commands > 0 else { return [] }
        let model = CapacityModel(costs: first.costs)
        let from = "from \(label(first.workers))'s costs"
        var rows: [BenchFigure] = []
        for step in steps {
            if let here = model.predict(workers: step.workers, processors: processors) {
                rows.append(
                    BenchFigure(
                        section: Self.section,
                        name: "model: \(label(step.workers)) on \(Int(processors)) processors, \(from)",
                        value: here.perSecond, unit: .perSecond, baselines: [.init("measured", step.perSecond)],
                        note: "bound: \(here.bound.rawValue)",
                        details: Self.bounds(model, step.workers, processors, ownCosts: step)))
            }
            if let free = model.predict(workers: step.workers, processors: nil) {
                rows.append(
                    BenchFigure(
                        section: Self.section, name: "model: \(label(step.workers)) with enough processors, \(from)",
                        value: free.perSecond, unit: .perSecond, note: "bound: \(free.bound.rawValue)"))
            }
        }
        return rows
    }

    /// Each bound of the prediction, and the prediction from the step's own costs (which
    /// tells a change of costs from a wrong form of the model).
    private static func bounds(_ model: CapacityModel, _ workers: Int, _ processors: Double, ownCosts step: ScaleStep)
        -> JSONObject
    {
        var details = JSONObject()
        if let own = CapacityModel(costs: step.costs).predict(workers: workers, processors: processors) {
            details["fromOwnCosts"] = .double(round(own.perSecond))
        }
        for (bound, value) in model.bounds(workers: workers, processors: processors) {
            let key: String =
                switch bound {
                case .workers: "workersBound"
                case .headLock: "headLockBound"
                case .processors: "processorsBound"
                }
            details[key] = .double(round(value))
        }
        return details
    }

    static func round(_ value: Double) -> Double { (value * 10).rounded() / 10 }
}
