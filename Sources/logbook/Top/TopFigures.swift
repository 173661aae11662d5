import LogbookWire

/// What `logbook top` shows for one process at one refresh: its status now, and the rates
/// and means between the previous refresh's status of the same process and this one
/// (nil when there is no earlier sample, the process restarted, or nothing happened that
/// a mean could be taken of). Pure arithmetic on two samples; no clock, no socket.
enum TopFigures {
    /// A worker's figures.
    struct Worker: Equatable {
        let status: WorkerStatus
        var commandsPerSecond: Double?
        var rejectedPerSecond: Double?
        var eventsPerSecond: Double?
        /// Commands per group commit between the two samples.
        var batchMean: Double?
        /// Mean milliseconds from taking a command off the socket to its reply.
        var commandMilliseconds: Double?
        /// Mean milliseconds per group commit.
        var commitMilliseconds: Double?
    }

    /// A query process's figures.
    struct Query: Equatable {
        let status: QueryStatus
        var appliedPerSecond: Double?
        var queriesPerSecond: Double?
    }

    /// The worker's figures at `now`, from `previous` taken `seconds` earlier.
    static func worker(_ now: WorkerStatus, previous: WorkerStatus?, seconds: Double) -> Worker {
        var figures = Worker(status: now)
        guard let previous, seconds > 0, now.uptimeSeconds >= previous.uptimeSeconds else { return figures }
        let commands = now.commands.accepted + now.commands.rejected
        let before = previous.commands.accepted + previous.commands.rejected
        figures.commandsPerSecond = rate(commands - before, seconds)
        figures.rejectedPerSecond = rate(now.commands.rejected - previous.commands.rejected, seconds)
        if let head = now.head, let earlier = previous.head {
            figures.eventsPerSecond = rate(Int(head - earlier), seconds)
        }
        if let inBatches = now.batches.commands, let earlier = previous.batches.commands {
            figures.batchMean = mean(Double(inBatches - earlier), now.batches.count - previous.batches.count)
        }
        if let latency = now.latency, let earlier = previous.latency {
            figures.commandMilliseconds = mean(
                (latency.commandSeconds - earlier.commandSeconds) * 1000, latency.commands - earlier.commands)
            figures.commitMilliseconds = mean(
                (latency.commitSeconds - earlier.commitSeconds) * 1000, latency.commits - earlier.commits)
        }
        return figures
    }

    /// The query process's figures at `now`, from `previous` taken `seconds` earlier.
    static func query(_ now: QueryStatus, previous: QueryStatus?, seconds: Double) -> Query {
        var figures = Query(status: now)
        guard let previous, seconds > 0, now.uptimeSeconds >= previous.uptimeSeconds else { return figures }
        figures.appliedPerSecond = rate(now.eventsApplied - previous.eventsApplied, seconds)
        figures.queriesPerSecond = rate(now.queriesAnswered - previous.queriesAnswered, seconds)
        return figures
    }

    /// A count's change per second; nil when it went down (a restart).
    private static func rate(_ change: Int, _ seconds: Double) -> Double? {
        change < 0 ? nil : Double(change) / seconds
    }

    /// `total / count`; nil when nothing was counted.
    private static func mean(_ total: Double, _ count: Int) -> Double? {
        count > 0 ? total / Double(count) : nil
    }
}
