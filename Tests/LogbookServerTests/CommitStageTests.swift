import LogbookApplication
import LogbookJSON
import LogbookMemory
import LogbookTestSupport
import LogbookZMQ
import Testing

@testable import LogbookServer

/// `CommitStage`, the worker's second pipeline stage, over an in-memory log: a batch handed
/// to it is committed on its own thread and its outcomes come back once, through the pipe
/// the command loop polls; a stop lets the batch in hand finish.
@Suite("Commit stage: one batch at a time on a thread of its own")
struct CommitStageTests {
    private static func registrations(_ prefix: String, count: Int) -> [CommandRequest] {
        (1...count).map { number in
            CommandRequest(
                commandId: "\(prefix)-\(number)", type: "RegisterUser",
                data: [
                    "userId": .string("\(prefix)\(number)"), "name": "Ann",
                    "email": .string("\(prefix)\(number)@example.com"),
                ])
        }
    }

    private static func stage(over store: InMemoryEventStore) throws -> CommitStage {
        try CommitStage(
            handler: CommandHandler(store: store, clock: StepClock(), ids: CountingIds()), heartbeat: Heartbeat())
    }

    @Test("a submitted batch is committed on the stage's thread; its outcomes come back once, and the pipe says when")
    func submittedBatch() throws {
        let store = InMemoryEventStore()
        let stage = try Self.stage(over: store)
        defer { stage.stop() }
        #expect(stage.isIdle)
        #expect(stage.takeFinished() == nil)

        stage.submit(Self.registrations("u", count: 20))
        #expect(!stage.isIdle)
        let ready = try ZMQPoll.wait([stage.finished.readable], timeoutMilliseconds: 20_000)
        #expect(ready == [true], "the pipe never became readable")
        let finished = try #require(stage.takeFinished())
        #expect(finished.outcomes.count == 20)
        for outcome in finished.outcomes {
            guard case .accepted(let accepted) = outcome else {
                Issue.record("refused: \(outcome)")
                continue
            }
            #expect(accepted.events.count == 2)
        }
        #expect(stage.takeFinished() == nil, "the outcomes are handed over once")
        #expect(stage.isIdle)
        #expect(try store.headPosition() == 40)
        // The pipe was drained with the outcomes: the loop's poll does not wake for nothing.
        #expect(try ZMQPoll.wait([stage.finished.readable], timeoutMilliseconds: 50) == [false])
    }

    @Test("a stop lets the submitted batch finish; its outcomes wait for the loop")
    func stopFinishesTheBatch() throws {
        let store = InMemoryEventStore()
        let stage = try Self.stage(over: store)
        stage.submit(Self.registrations("s", count: 50))
        stage.stop()
        let finished = try #require(stage.waitForFinished())
        #expect(finished.outcomes.count == 50)
        #expect(try store.headPosition() == 100)
        #expect(stage.waitForFinished() == nil)
        stage.stop()
    }
}
