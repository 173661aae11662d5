import LogbookApplication
import LogbookJSON
import LogbookWire
import Testing

/// The `Status` counters of a worker and a query process running in the test process,
/// read back as `WorkerStatus` and `QueryStatus`, move with what the processes do.
@Suite("Worker and query process: Status counters", .serialized)
struct StatusCounterTests {
    @Test("the worker counts accepted, rejected and retried commands, batches and published events")
    func workerCounters() throws {
        let rig = try ServiceRig()
        defer { rig.stop() }
        let commands = try rig.commandsClient()
        let fresh = try commands.workerStatus()
        #expect(fresh.head == 0)
        #expect(fresh.commands == WorkerStatus.Commands(accepted: 0, rejected: 0, retries: 0, decidedAgain: 0))
        #expect(fresh.batches == WorkerStatus.Batches(count: 0, largest: 0, last: 0, meanSize: 0, commands: 0))
        #expect(fresh.published == 0)
        #expect(fresh.subscribers != nil)  // the rig's query process may have connected already
        #expect(fresh.latency == WorkerStatus.Latency(commands: 0, commandSeconds: 0, commits: 0, commitSeconds: 0))

        // One at a time, so each command is a batch of its own.
        #expect(try commands.request(Fixture.registerUser("u1", commandId: "c1"))["ok"] == true)  // 1, 2
        #expect(try commands.request(Fixture.addProduct("p1", commandId: "c2"))["ok"] == true)  // 3
        #expect(try commands.request(Fixture.addProduct("p1", commandId: "c3"))["ok"] == false)  // already exists
        #expect(try commands.request(Fixture.registerUser("u1", commandId: "c1"))["ok"] == true)  // a retry
        try commands.send(frame: Array("not json".utf8))  // refused before the handler: no batch
        #expect(try commands.receive()["ok"] == false)

        let status = try commands.workerStatus()
        #expect(status.head == 3)
        #expect(status.commands == WorkerStatus.Commands(accepted: 3, rejected: 2, retries: 1, decidedAgain: 0))
        #expect(status.batches == WorkerStatus.Batches(count: 4, largest: 1, last: 1, meanSize: 1, commands: 4))
        #expect(status.published == 2)  // the user and the product; the email claim is on no topic
        // Each batch's commands were timed to their replies, and each batch's append (the
        // retry's too: the store answers it from its record) was timed.
        #expect(status.latency?.commands == 4)
        #expect(status.latency?.commits == 4)
        #expect((status.latency?.commandSeconds ?? 0) > 0)
        #expect((status.latency?.commitSeconds ?? 0) > 0)
    }

    @Test("the query process counts events applied, queries answered and waiting, and rows")
    func queryCounters() throws {
        let rig = try ServiceRig()
        defer { rig.stop() }
        let commands = try rig.commandsClient()
        let queries = try rig.queriesClient()
        let waiter = try rig.queriesClient()
        let fresh = try queries.queryStatus()
        #expect(fresh.checkpoint == 0)
        #expect(fresh.generation == 1)
        #expect(fresh.eventsApplied == 0)
        #expect(fresh.readModels == ReadModelCounts())
        #expect(fresh.rebuild == .idle)

        _ = try commands.request(Fixture.registerUser("u1", commandId: "c1"))  // 1, 2
        _ = try commands.request(Fixture.addProduct("p1", commandId: "c2"))  // 3
        let caughtUp = try eventually({ try queries.queryStatus() }, until: { $0.checkpoint == 3 })
        #expect(caughtUp.checkpoint == 3)
        #expect(caughtUp.head == 3)
        #expect(caughtUp.lag == 0)
        #expect(caughtUp.eventsApplied == 2)  // the email claim is not the read models' business
        #expect(caughtUp.holesDetected == 0)
        #expect(caughtUp.readModels == ReadModelCounts(users: 1, products: 1))

        #expect(try queries.request(Fixture.getUser("u1", queryId: "q1", minPosition: 3))["ok"] == true)
        #expect(try queries.request(Fixture.getProduct("p1", queryId: "q2"))["ok"] == true)
        try waiter.send(Fixture.getUser("u2", queryId: "q3", minPosition: 4, timeoutMs: 60_000))
        let waiting = try eventually({ try queries.queryStatus() }, until: { $0.queriesWaiting == 1 })
        #expect(waiting.queriesAnswered == 2)
        #expect(waiting.queriesWaiting == 1)

        _ = try commands.request(Fixture.registerUser("u2", commandId: "c3"))  // 4, 5
        #expect(try waiter.receive()["result"]?.objectValue?["userId"] == "u2")
        let done = try eventually({ try queries.queryStatus() }, until: { $0.checkpoint == 5 })
        #expect(done.queriesAnswered == 3)
        #expect(done.queriesWaiting == 0)
        #expect(done.eventsApplied == 3)
        #expect(done.readModels == ReadModelCounts(users: 2, products: 1))
    }
}
