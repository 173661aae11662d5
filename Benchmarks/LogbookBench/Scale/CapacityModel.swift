/// Throughput of W workers sharing one PostgreSQL log, from per-command costs measured with
/// one worker:
///
///     X(W, C) = min( W / max(worker, postgres),    each worker's commit stage decides the next
///                                                   batch while its backend appends the last:
///                                                   the larger of the two costs bounds it (what
///                                                   a worker does between one append's answer
///                                                   and the next one's sending, landing and
///                                                   sealing, stays in series, so this is an
///                                                   upper bound)
///                    1 / serial,                    the head row's lock, held by one append at
///                                                   a time from its head update to its flushed
///                                                   COMMIT: seconds held per command
///                    C / (worker + postgres + feed + load) )   C processors shared by all
///
/// With enough processors the third bound drops out. `load` is the bench's own client
/// processes' cost, which shares the processors only on the machine that measured it.
struct CapacityModel: Sendable, Equatable {
    /// Processor seconds per command (all workers together, PostgreSQL's processes, the feed
    /// process, the load clients) and seconds of head-row lock per command.
    struct Costs: Sendable, Equatable {
        var worker: Double
        var postgres: Double
        var feed: Double
        var load: Double
        var serial: Double

        var service: Double { worker + postgres + feed }
    }

    /// Which bound sets a prediction.
    enum Bound: String, Sendable, Equatable {
        case workers = "the workers' commit stages or their backends"
        case headLock = "the head-row lock"
        case processors = "the processors"
    }

    let costs: Costs

    /// The bound each term sets, commands a second; nil for a cost of zero.
    func bounds(workers: Int, processors: Double?) -> [(Bound, Double)] {
        var bounds: [(Bound, Double)] = []
        if max(costs.worker, costs.postgres) > 0 {
            bounds.append((.workers, Double(workers) / max(costs.worker, costs.postgres)))
        }
        if costs.serial > 0 { bounds.append((.headLock, 1 / costs.serial)) }
        if let processors, costs.service + costs.load > 0 {
            bounds.append((.processors, processors / (costs.service + costs.load)))
        }
        return bounds
    }

    /// Commands a second `workers` workers would take on `processors` processors shared with
    /// the load (nil: enough of them), and the bound that sets it.
    func predict(workers: Int, processors: Double?) -> (perSecond: Double, bound: Bound)? {
        bounds(workers: workers, processors: processors).min { $0.1 < $1.1 }.map { ($0.1, $0.0) }
    }
}
