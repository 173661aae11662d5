import LogbookApplication
import LogbookWire
import LogbookZMQ

/// What the command loop has done since it started, for `Status`. Owned by that loop.
struct WorkerStatistics {
    var accepted = 0
    var rejected = 0
    var retries = 0
    /// Commands decided again after a conflict (`CommandHandler.commandsDecidedAgain`).
    var decidedAgain = 0
    var batches = 0
    var commandsInBatches = 0
    var largestBatch = 0
    var lastBatch = 0
    var published = 0
    /// The process's CURVE security, whose handshake counts `Status` shows; nil when off.
    var security: ServerSecurity?

    mutating func record(batchOf outcomes: [CommandOutcome]) {
        guard !outcomes.isEmpty else { return }
        batches += 1
        commandsInBatches += outcomes.count
        largestBatch = max(largestBatch, outcomes.count)
        lastBatch = outcomes.count
        for outcome in outcomes {
            switch outcome {
            case .accepted(let accepted):
                self.accepted += 1
                if accepted.wasRetry { retries += 1 }
            case .rejected: rejected += 1
            }
        }
    }

    /// Refusals made before a command reached the handler (unreadable requests).
    mutating func recordRefusal() {
        rejected += 1
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
                count: batches, largest: largestBatch, last: lastBatch, meanSize: (mean * 100).rounded() / 100),
            published: published, peers: security.map(\.peerStatus))
    }
}
