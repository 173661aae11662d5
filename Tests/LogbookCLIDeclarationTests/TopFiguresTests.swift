import LogbookWire
import Testing

@testable import logbook

/// `logbook top`'s rates and means between two `Status` samples.
@Suite("logbook top: figures between two samples")
struct TopFiguresTests {
    static func worker(
        uptime: Int64, accepted: Int, rejected: Int, head: Int64, batches: Int, inBatches: Int, commands: Int,
        commandSeconds: Double, commits: Int, commitSeconds: Double
    ) -> WorkerStatus {
        WorkerStatus(
            head: head, uptimeSeconds: uptime,
            commands: .init(accepted: accepted, rejected: rejected, retries: 0),
            batches: .init(count: batches, largest: 0, last: 0, meanSize: 0, commands: inBatches), published: 0,
            latency: .init(
                commands: commands, commandSeconds: commandSeconds, commits: commits, commitSeconds: commitSeconds))
    }

    @Test("rates are changes per second; means are taken over what happened between the samples")
    func rates() {
        let before = Self.worker(
            uptime: 10, accepted: 100, rejected: 4, head: 300, batches: 10, inBatches: 104, commands: 104,
            commandSeconds: 1.0, commits: 10, commitSeconds: 0.1)
        let now = Self.worker(
            uptime: 12, accepted: 140, rejected: 6, head: 380, batches: 14, inBatches: 146, commands: 146,
            commandSeconds: 1.42, commits: 14, commitSeconds: 0.14)
        let figures = TopFigures.worker(now, previous: before, seconds: 2)
        #expect(figures.commandsPerSecond == 21)
        #expect(figures.rejectedPerSecond == 1)
        #expect(figures.eventsPerSecond == 40)
        #expect(figures.batchMean == 10.5)
        #expect(abs((figures.commandMilliseconds ?? 0) - 10) < 1e-9)
        #expect(abs((figures.commitMilliseconds ?? 0) - 10) < 1e-9)
    }

    @Test("no earlier sample, a restart (uptime went back) or nothing committed: no figure")
    func unknown() {
        let sample = Self.worker(
            uptime: 50, accepted: 7, rejected: 0, head: 9, batches: 3, inBatches: 7, commands: 7, commandSeconds: 0.1,
            commits: 3, commitSeconds: 0.01)
        let first = TopFigures.worker(sample, previous: nil, seconds: 1)
        #expect(first.commandsPerSecond == nil && first.batchMean == nil)
        let restarted = Self.worker(
            uptime: 1, accepted: 0, rejected: 0, head: 9, batches: 0, inBatches: 0, commands: 0, commandSeconds: 0,
            commits: 0, commitSeconds: 0)
        let afterRestart = TopFigures.worker(restarted, previous: sample, seconds: 1)
        #expect(afterRestart.commandsPerSecond == nil && afterRestart.eventsPerSecond == nil)
        let idle = TopFigures.worker(sample, previous: sample, seconds: 1)
        #expect(idle.commandsPerSecond == 0)
        #expect(idle.batchMean == nil && idle.commandMilliseconds == nil && idle.commitMilliseconds == nil)
    }
}
