import LogbookApplication
import LogbookMetrics
import LogbookWire
import LogbookZMQ

/// What the command loop has done since it started: the one set of numbers both `Status`
/// and the metrics are made from. A value; `WorkerMetrics` keeps it behind its lock.
struct WorkerStatistics {
    var accepted = 0
    var rejected = 0
    /// Rejections (refused requests included) by error code.
    var rejectedByCode: [String: Int] = [:]
    var retries = 0
    /// Commands decided again after a conflict (`CommandHandler.commandsDecidedAgain`).
    var decidedAgain = 0
    var batches = 0
    var commandsInBatches = 0
    var largestBatch = 0
    var lastBatch = 0
    /// Events the worker's own commits appended (a retry appends none).
    var eventsAppended = 0
    var published = 0
    /// Connections to the feed socket now (filled in when read, from `ConnectionCount`).
    var subscribers = 0
    /// The log's head as this worker last saw it: at start and after each of its commits.
    var head: Int64 = 0
    /// Commands per group commit.
    var batchSizes = Histogram(bounds: Histogram.batchSizes)
    /// Seconds each append (one transaction) took, from the store's call to its return.
    var commitSeconds = Histogram(bounds: Histogram.latencySeconds)
    /// Seconds from taking a command off the socket to sending its reply.
    var commandSeconds = Histogram(bounds: Histogram.latencySeconds)
    /// The process's CURVE security, whose handshake counts `Status` shows; nil when off.
    var security: ServerSecurity?

    mutating func record(batchOf outcomes: [CommandOutcome]) {
        guard !outcomes.isEmpty else { return }
        batches += 1
        commandsInBatches += outcomes.count
        largestBatch = max(largestBatch, outcomes.count)
        lastBatch = outcomes.count
        batchSizes.observe(Double(outcomes.count))
        for outcome in outcomes {
            switch outcome {
            case .accepted(let accepted):
                self.accepted += 1
                if accepted.wasRetry {
                    retries += 1
                } else {
                    eventsAppended += accepted.events.count
                    if let last = accepted.events.last { head = max(head, last.position) }
                }
            case .rejected(let error): recordRefusal(code: error.code)
            }
        }
    }

    /// A rejection: a command's, or a refusal made before a command reached the handler
    /// (an unreadable request, an unauthorized key).
    mutating func recordRefusal(code: ErrorCode) {
        rejected += 1
        rejectedByCode[code.rawValue, default: 0] += 1
    }

    /// The worker's `Status` with these counts, the log's `head` (nil when it could not be
    /// read) and the process's uptime; the mean batch size is rounded to two decimals.
    func status(head: Int64?, uptimeSeconds: Int64) -> WorkerStatus {
        let mean = batches == 0 ? 0 : Double(commandsInBatches) / Double(batches)
        return WorkerStatus(
            head: head, uptimeSeconds: uptimeSeconds,
            commands: WorkerStatus.Commands(
                accepted: accepted, rejected: rejected, retries: retries, decidedAgain: decidedAgain),
            batches: WorkerStatus.Batches(
                count: batches, largest: largestBatch, last: lastBatch, meanSize: (mean * 100).rounded() / 100,
                commands: commandsInBatches),
            published: published, peers: security.map(\.peerStatus), subscribers: subscribers,
            latency: WorkerStatus.Latency(
                commands: Int(commandSeconds.count), commandSeconds: commandSeconds.sum,
                commits: Int(commitSeconds.count), commitSeconds: commitSeconds.sum))
    }
}
