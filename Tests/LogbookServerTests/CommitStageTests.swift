import Foundation
import LogbookApplication
import LogbookJSON
import LogbookMemory
import LogbookTestSupport
import LogbookZMQ
import Testing

@testable import LogbookServer

/// `CommitStage`, the worker's second pipeline stage, over an in-memory log: a batch handed
/// to it is committed on its own thread and its outcomes come back once, through the pipe
/// the command loop polls; a stop lets the batch in hand finish. With a flusher (here one
/// the test holds and releases), a batch comes back only after a flush that began once it
/// was appended, and the next batch is appended meanwhile.
@Suite("Commit stage: one batch at a time on a thread of its own, flushed on another")
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

    private static func stage(
        over store: InMemoryEventStore, flusher: (any LogFlusher)? = nil, turns: (any WriteTurns)? = TestTurns()
    ) throws -> CommitStage {
        try CommitStage(
            handler: CommandHandler(store: store, clock: StepClock(), ids: CountingIds(), buckets: .forTests),
            flusher: flusher,
            turns: turns, heartbeat: Heartbeat())
    }

    /// Runs `body` with a stage over an in-memory log, a held flusher and test turns (free
    /// unless the test says otherwise); every flush is let go at the end.
    private static func withInlineStage(
        _ body: (InMemoryEventStore, HeldFlusher, TestTurns, CommitStage) throws -> Void
    ) throws {
        let store = InMemoryEventStore()
        let flusher = HeldFlusher()
        let turns = TestTurns()
        let stage = try Self.stage(over: store, flusher: flusher, turns: turns)
        defer {
            flusher.release(times: 100)
            stage.stop()
        }
        try body(store, flusher, turns, stage)
    }

    /// Write turns whose lock is free or held as the test says, counting what the stage asks.
    final class TestTurns: WriteTurns, @unchecked Sendable {
        private let lock = NSLock()
        private var held = false
        private var counts = (taken: 0, declined: 0, ended: 0)

        var lockHeldElsewhere: Bool {
            get { lock.withLock { held } }
            set { lock.withLock { held = newValue } }
        }
        var taken: Int { lock.withLock { counts.taken } }
        var declined: Int { lock.withLock { counts.declined } }
        var ended: Int { lock.withLock { counts.ended } }

        func takeTurnIfFree() throws(EventStoreError) -> Bool {
            lock.withLock {
                if held { counts.declined += 1 } else { counts.taken += 1 }
                return !held
            }
        }

        func endTurn() { lock.withLock { counts.ended += 1 } }
    }

    /// A stage over an in-memory log with a held flusher, given a batch of
    /// `CommitStage.inlineFlushBelow` registrations (large enough for the flush thread; a
    /// smaller one is synced on the append thread) whose flush has begun and is held: the
    /// append thread is free again. Every flush is let go at the end.
    private static func withFirstFlushHeld(
        _ body: (InMemoryEventStore, HeldFlusher, CommitStage) throws -> Void
    ) throws {
        let store = InMemoryEventStore()
        let flusher = HeldFlusher()
        let stage = try Self.stage(over: store, flusher: flusher)
        defer {
            flusher.release(times: 100)
            stage.stop()
        }
        stage.submit(Self.registrations("a", count: CommitStage.inlineFlushBelow))
        try flusher.waitForFlushes(started: 1)
        try body(store, flusher, stage)
    }

    /// Waits (up to 20 s) until the stage hands back at least one batch: the pipe also wakes
    /// the loop when the append thread is free, with nothing finished yet.
    private static func nextFinished(_ stage: CommitStage) throws -> [CommitStage.Finished] {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            guard try ZMQPoll.wait([stage.finished.readable], timeoutMilliseconds: 1_000) == [true] else { continue }
            let taken = stage.takeFinished()
            if !taken.isEmpty { return taken }
        }
        Issue.record("no batch came back")
        return []
    }

    @Test("a submitted batch is committed on the stage's thread; its outcomes come back once, and the pipe says when")
    func submittedBatch() throws {
        let store = InMemoryEventStore()
        let stage = try Self.stage(over: store)
        defer { stage.stop() }
        #expect(stage.isIdle)
        #expect(stage.takeFinished().isEmpty)

        stage.submit(Self.registrations("u", count: 20))
        #expect(!stage.isIdle)
        let taken = try Self.nextFinished(stage)
        #expect(taken.count == 1)
        let finished = try #require(taken.first)
        #expect(finished.outcomes.count == 20)
        for outcome in finished.outcomes {
            guard case .accepted(let accepted) = outcome else {
                Issue.record("refused: \(outcome)")
                continue
            }
            #expect(accepted.events.count == 2)
        }
        #expect(stage.takeFinished().isEmpty, "the outcomes are handed over once")
        #expect(stage.isIdle)
        #expect(try store.headPosition() == 40)
        // The pipe was drained with the outcomes: the loop's poll does not wake for nothing.
        #expect(try ZMQPoll.wait([stage.finished.readable], timeoutMilliseconds: 50) == [false])
    }

    @Test("sending ahead, a batch submitted while one is in flight comes back after it, both committed")
    func sendingAhead() throws {
        let store = InMemoryEventStore(sendsAhead: true)
        let stage = try Self.stage(over: store, turns: nil)
        defer { stage.stop() }
        stage.submit(Self.registrations("a", count: 5))
        var finished: [CommitStage.Finished] = []
        var submittedSecond = false
        while finished.count < 2 {
            if !submittedSecond, stage.acceptsBatch {
                stage.submit(Self.registrations("b", count: 5))
                submittedSecond = true
            }
            let taken = try Self.nextFinished(stage)
            if taken.isEmpty { break }
            finished += taken
        }
        #expect(finished.map(\.outcomes.count) == [5, 5])
        #expect(finished.flatMap(\.outcomes).allSatisfy { $0.accepted != nil })
        #expect(try store.headPosition() == 20)
    }

    /// A log that sends ahead and never answers: its answer's descriptor stays silent, and
    /// at the deadline `results()` fails as PostgreSQL's does once its cancel returns.
    final class SilentStore: ForwardingEventStore, @unchecked Sendable {
        let inner: any EventStore = InMemoryEventStore()
        private let ends: [Int32]
        init() {
            var ends: [Int32] = [0, 0]
            _ = pipe(&ends)
            self.ends = ends
        }
        deinit { for end in ends { close(end) } }
        var sendsAhead: Bool { true }
        func append(_ batch: [AppendRequest]) throws(EventStoreError) -> [AppendResult] {
            throw .unavailable("no answer", cause: .unknown)
        }
        func send(_ batch: [AppendRequest]) throws(EventStoreError) -> AppendInFlight {
            AppendInFlight(descriptor: ends[0], deadline: .now + .milliseconds(200)) { () throws(EventStoreError) in
                throw .unavailable("no answer", cause: .unknown)
            }
        }
    }

    @Test("sending ahead, an append whose answer never begins is landed at its store's deadline, refused")
    func silentAppend() throws {
        let stage = try CommitStage(
            handler: CommandHandler(store: SilentStore(), clock: StepClock(), ids: CountingIds(), buckets: .forTests),
            heartbeat: Heartbeat())
        defer { stage.stop() }
        stage.submit(Self.registrations("u", count: 3))
        let finished = try #require(try Self.nextFinished(stage).first)
        #expect(finished.outcomes.map(\.error?.code) == Array(repeating: .unavailable, count: 3))
    }

    @Test("a stop lets the submitted batch finish; its outcomes wait for the loop")
    func stopFinishesTheBatch() throws {
        let store = InMemoryEventStore()
        let stage = try Self.stage(over: store)
        stage.submit(Self.registrations("s", count: 50))
        stage.stop()
        let finished = stage.waitForFinished()
        #expect(finished.map(\.outcomes.count) == [50])
        #expect(try store.headPosition() == 100)
        #expect(stage.waitForFinished().isEmpty)
        stage.stop()
    }

    @Test(
        "with a flusher, a batch comes back only after a flush begun once it was appended; the next is appended meanwhile"
    )
    func flushedBatches() throws {
        try Self.withFirstFlushHeld { store, flusher, stage in
            let large = CommitStage.inlineFlushBelow
            #expect(try store.headPosition() == Int64(2 * large))
            #expect(stage.acceptsBatch)
            #expect(stage.takeFinished().isEmpty, "no batch comes back before its flush returned")

            stage.submit(Self.registrations("b", count: 5))
            try waitUntil { try store.headPosition() == Int64(2 * large + 10) }
            #expect(stage.takeFinished().isEmpty)

            flusher.release(times: 1)
            let first = try Self.nextFinished(stage)
            #expect(first.map(\.outcomes.count) == [large], "the first flush covers only what was appended before it")
            // The second batch was appended during the first flush: it needs a flush of its own.
            try flusher.waitForFlushes(started: 2)
            #expect(stage.takeFinished().isEmpty)
            flusher.release(times: 1)
            let second = try Self.nextFinished(stage)
            #expect(second.map(\.outcomes.count) == [5])
            #expect(second.first?.outcomes.allSatisfy { $0.accepted != nil } == true)
            #expect(stage.isIdle)
        }
    }

    @Test("batches appended while one flush runs share the next one")
    func batchesShareAFlush() throws {
        try Self.withFirstFlushHeld { store, flusher, stage in
            let large = CommitStage.inlineFlushBelow
            for (number, prefix) in ["b", "c"].enumerated() {
                try waitUntil { stage.acceptsBatch }
                stage.submit(Self.registrations(prefix, count: 2))
                try waitUntil { try store.headPosition() == Int64(2 * large + 4 * (number + 1)) }
            }
            flusher.release(times: 2)
            var taken: [CommitStage.Finished] = []
            while taken.count < 3 { taken += try Self.nextFinished(stage) }
            #expect(taken.map(\.outcomes.count) == [large, 2, 2], "in the order they were submitted")
            #expect(flusher.started == 2, "the two batches appended during the first flush share one")
            #expect(flusher.threads == ["logbook-flushes", "logbook-flushes"])
        }
    }

    @Test("a small batch with nothing waiting is synced by the append thread itself; a large one by the flush thread")
    func smallBatchFlushedInline() throws {
        let store = InMemoryEventStore()
        let flusher = HeldFlusher()
        let stage = try Self.stage(over: store, flusher: flusher)
        defer { stage.stop() }
        flusher.release(times: 100)
        stage.submit(Self.registrations("s", count: CommitStage.inlineFlushBelow - 1))
        #expect(try Self.nextFinished(stage).map(\.outcomes.count) == [CommitStage.inlineFlushBelow - 1])
        try waitUntil { stage.acceptsBatch }
        stage.submit(Self.registrations("l", count: CommitStage.inlineFlushBelow))
        #expect(try Self.nextFinished(stage).map(\.outcomes.count) == [CommitStage.inlineFlushBelow])
        #expect(flusher.threads == ["logbook-commits", "logbook-flushes"])
    }

    @Test(
        "a small batch on an idle stage runs to completion on the caller's thread; a busy stage or a large batch declines"
    )
    func inlineBatch() throws {
        try Self.withInlineStage { store, flusher, _, stage in
            flusher.release(times: 1)
            let caller = Thread.current.name ?? "?"
            let inline = try #require(stage.runInline(Self.registrations("i", count: 3)))
            #expect(inline.outcomes.map(\.accepted?.events.count) == [2, 2, 2])
            #expect(flusher.threads == [caller], "the inline batch was synced on another thread")
            #expect(try store.headPosition() == 6)
            #expect(stage.isIdle)
            #expect(stage.takeFinished().isEmpty, "an inline batch came back through the pipe as well")

            // Too large for it: declined, nothing appended.
            #expect(stage.runInline(Self.registrations("j", count: CommitStage.inlineFlushBelow)) == nil)
            #expect(try store.headPosition() == 6)

            // A batch in the stage (its flush held): declined until that one is taken back.
            stage.submit(Self.registrations("k", count: CommitStage.inlineFlushBelow))
            try flusher.waitForFlushes(started: 2)
            #expect(stage.runInline(Self.registrations("m", count: 1)) == nil)
            flusher.release(times: 1)
            #expect(try Self.nextFinished(stage).map(\.outcomes.count) == [CommitStage.inlineFlushBelow])
            flusher.release(times: 1)
            #expect(stage.runInline(Self.registrations("m", count: 1)) != nil)
            #expect(try store.headPosition() == Int64(2 * (4 + CommitStage.inlineFlushBelow)))
        }
    }

    @Test(
        "a stage without a flusher or without write turns runs nothing inline: a commit that waits must not hold the command loop"
    )
    func noInlineWithoutFlusherOrTurns() throws {
        let store = InMemoryEventStore()
        let turns = TestTurns()
        let stage = try Self.stage(over: store, turns: turns)
        defer { stage.stop() }
        #expect(stage.runInline(Self.registrations("n", count: 1)) == nil)
        #expect(turns.taken + turns.declined == 0)
        let noTurns = try Self.stage(over: store, flusher: HeldFlusher(), turns: nil)
        defer { noTurns.stop() }
        #expect(noTurns.runInline(Self.registrations("n", count: 1)) == nil)
        #expect(try store.headPosition() == 0)
    }

    @Test(
        "a write lock held elsewhere sends the batch to the stage: nothing decided or appended on the caller's thread"
    )
    func heldLockDeclinesInline() throws {
        try Self.withInlineStage { store, flusher, turns, stage in
            turns.lockHeldElsewhere = true
            #expect(stage.runInline(Self.registrations("h", count: 2)) == nil)
            #expect(turns.declined == 1 && turns.ended == 0)
            #expect(try store.headPosition() == 0)
            #expect(flusher.started == 0)
            // The stage was left as it was: it takes the batch, and runs a later one inline once the lock is free.
            #expect(stage.acceptsBatch)
            stage.submit(Self.registrations("h", count: 2))
            flusher.release(times: 1)
            #expect(try Self.nextFinished(stage).map(\.outcomes.count) == [2])
            turns.lockHeldElsewhere = false
            flusher.release(times: 1)
            let inline = try #require(stage.runInline(Self.registrations("i", count: 1)))
            #expect(inline.outcomes.map(\.accepted?.events.count) == [2])
            #expect(turns.taken == 1 && turns.ended == 1)
        }
    }

    @Test("a turn whose batch appended nothing (every command refused before its record) is ended all the same")
    func refusedBatchEndsItsTurn() throws {
        try Self.withInlineStage { store, flusher, turns, stage in
            flusher.release(times: 1)
            let unknown = CommandRequest(commandId: "u-1", type: "NoSuchCommand", data: [:])
            let refused = try #require(stage.runInline([unknown]))
            #expect(refused.outcomes.map(\.error?.code) == [.unknownType])
            #expect(turns.taken == 1 && turns.ended == 1)
            #expect(try store.headPosition() == 0)
        }
    }

    @Test("a failed inline flush refuses its batch as unavailable and, final, every later one unappended")
    func failedInlineFlush() throws {
        let store = InMemoryEventStore()
        let flusher = HeldFlusher(failing: .unavailable("cannot sync /x/events.sqlite3-wal: EIO", cause: .ioError))
        let stage = try Self.stage(over: store, flusher: flusher)
        defer { stage.stop() }
        flusher.release(times: 100)
        let refused = try #require(stage.runInline(Self.registrations("f", count: 2)))
        #expect(refused.outcomes.map(\.error?.code) == [.unavailable, .unavailable])
        #expect(try store.headPosition() == 4, "the batch was appended before its flush failed")
        #expect(stage.runInline(Self.registrations("g", count: 1)) == nil)
        stage.submit(Self.registrations("g", count: 1))
        #expect(try Self.nextFinished(stage).first?.outcomes.map(\.error?.code) == [.unavailable])
        #expect(try store.headPosition() == 4, "a batch after a failed flush was appended")
        #expect(flusher.started == 1)
    }

    @Test("a failed flush refuses every command of the batches it covered as unavailable, not as accepted")
    func failedFlush() throws {
        let store = InMemoryEventStore()
        let flusher = HeldFlusher(failing: .unavailable("cannot sync /x/events.sqlite3-wal: EIO", cause: .ioError))
        let stage = try Self.stage(over: store, flusher: flusher)
        defer { stage.stop() }
        flusher.release(times: 100)
        stage.submit(Self.registrations("f", count: 4))
        let finished = try Self.nextFinished(stage)
        let outcomes = try #require(finished.first?.outcomes)
        #expect(outcomes.count == 4)
        for outcome in outcomes {
            #expect(outcome.error?.code == .unavailable)
            #expect(outcome.error?.message == "the event log is unavailable: I/O error")
            #expect(outcome.error?.serverDetail?.contains("EIO") == true)
        }
        #expect(try store.headPosition() == 8, "the batch was appended before its flush failed")

        // Final: a later batch is refused without being appended, and no flush is tried.
        try waitUntil { stage.acceptsBatch }
        stage.submit(Self.registrations("g", count: 3))
        let later = try Self.nextFinished(stage)
        #expect(later.first?.outcomes.map(\.error?.code) == [.unavailable, .unavailable, .unavailable])
        #expect(try store.headPosition() == 8, "a batch after a failed flush was appended")
        #expect(flusher.started == 1)
        #expect(stage.isIdle)
    }

    @Test("at most three batches are in the stage: a free append thread takes no fourth while flushes lag")
    func boundedInFlight() throws {
        try Self.withFirstFlushHeld { store, flusher, stage in
            for (number, prefix) in ["b", "c"].enumerated() {
                try waitUntil { stage.acceptsBatch }
                stage.submit(Self.registrations(prefix, count: CommitStage.inlineFlushBelow))
                try waitUntil { try store.headPosition() == Int64(2 * CommitStage.inlineFlushBelow * (number + 2)) }
            }
            usleep(20_000)
            #expect(!stage.acceptsBatch, "a fourth batch while three wait for their flushes")
            flusher.release(times: 1)
            var taken: [CommitStage.Finished] = []
            while taken.isEmpty { taken += try Self.nextFinished(stage) }
            try waitUntil { stage.acceptsBatch }
        }
    }
}

/// A flusher the test holds: each flush waits until released once, then returns (or throws
/// `failing`); it counts the flushes that began.
private final class HeldFlusher: LogFlusher, @unchecked Sendable {
    private let condition = NSCondition()
    private var releases = 0
    private var startedCount = 0
    private var threadNames: [String] = []
    private let failing: EventStoreError?

    init(failing: EventStoreError? = nil) { self.failing = failing }

    var started: Int {
        condition.lock()
        defer { condition.unlock() }
        return startedCount
    }

    /// The names of the threads that flushed, in order.
    var threads: [String] {
        condition.lock()
        defer { condition.unlock() }
        return threadNames
    }

    func flush() throws(EventStoreError) {
        condition.lock()
        startedCount += 1
        threadNames.append(Thread.current.name ?? "?")
        condition.broadcast()
        while releases == 0 { condition.wait() }
        releases -= 1
        condition.unlock()
        if let failing { throw failing }
    }

    func release(times: Int) {
        condition.lock()
        releases += times
        condition.broadcast()
        condition.unlock()
    }

    func waitForFlushes(started count: Int) throws {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: 20)
        while startedCount < count {
            guard condition.wait(until: deadline) else { throw HeldFlusherTimeout() }
        }
    }
}

private struct HeldFlusherTimeout: Error {}

/// Polls `condition` every millisecond for up to 20 s.
private func waitUntil(_ condition: () throws -> Bool) throws {
    let deadline = Date(timeIntervalSinceNow: 20)
    while try !condition() {
        guard Date() < deadline else { throw HeldFlusherTimeout() }
        usleep(1_000)
    }
}
