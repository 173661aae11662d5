import LogbookWire
import Testing

@testable import logbook

/// `logbook status --check`'s rules on the `Status` documents it gets back (the processes
/// down or lagging are tested end to end in `StatusCheckTests`).
@Suite("status --check: the health rules")
struct HealthCheckTests {
    static func worker(head: Int64?) -> WorkerStatus {
        WorkerStatus(
            head: head, uptimeSeconds: 1, commands: .init(accepted: 0, rejected: 0, retries: 0),
            batches: .init(count: 0, largest: 0, last: 0, meanSize: 0), published: 0)
    }

    @Test func aWorkerThatAnswersWithoutAHeadCannotReadItsLogAndFails() {
        var health = HealthCheck(maximumLag: 10)
        health.worker(Self.worker(head: 5), at: "tcp://a:1")
        #expect(health.isHealthy)
        health.worker(Self.worker(head: nil), at: "tcp://b:2")
        #expect(health.problems == ["worker tcp://b:2: cannot read its log (Status has no head)"])
    }
}
