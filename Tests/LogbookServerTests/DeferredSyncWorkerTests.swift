import Foundation
import LogbookApplication
import LogbookJSON
import LogbookSQLite
import LogbookServer
import LogbookTestSupport
import LogbookWire
import LogbookZMQ
import Testing

/// A worker on a SQLite log whose writer commits with deferred syncs (the `logbook run
/// worker` configuration), its flushes held by the test: a committed command is neither
/// replied to, nor published, nor served by `ReadLog` or `Status` before a flush covered it,
/// whether it ran inline on the command loop's thread or through the stage's threads.
@Suite("Worker with deferred syncs: nothing leaves before its flush")
struct DeferredSyncWorkerTests {
    /// The horizon's flush, made to wait until the test lets it go.
    final class HeldHorizon: LogFlusher, @unchecked Sendable {
        let horizon: SQLiteDurableHorizon
        private let condition = NSCondition()
        private var open = false
        init(_ horizon: SQLiteDurableHorizon) { self.horizon = horizon }

        func flush() throws(EventStoreError) {
            condition.lock()
            while !open { condition.wait() }
            condition.unlock()
            try horizon.flush()
        }

        func letGo() {
            condition.lock()
            open = true
            condition.broadcast()
            condition.unlock()
        }
    }

    @Test(
        "a command's reply, feed message, ReadLog page and Status head wait for the flush that covers it",
        arguments: [false, true])
    func nothingBeforeTheFlush(inline: Bool) throws {
        let directory = try SocketFolder.make("logbook-deferred")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.sqlite3").path
        let endpoints = ServiceEndpoints.ipc(in: directory)
        let horizon = try SQLiteDurableHorizon.opening(path: path)
        let held = HeldHorizon(horizon)
        // With the writer's turns the command loop runs the lone command itself
        // (`CommitStage.runInline`); without them it goes through the stage's threads.
        let log = WorkerLogConnections(
            openWriter: { () throws(EventStoreError) -> WorkerLogConnections.Writer in
                let store = try SQLiteEventStore(path: path, durability: .deferredSyncs(horizon))
                return (store, held, inline ? store : nil)
            },
            openReader: { () throws(EventStoreError) -> any EventStore in
                try SQLiteEventStore(path: path, durability: .readsDurable(horizon))
            }, buckets: .forTests)
        let worker = try WorkerService(
            endpoints: endpoints, log: log, clock: StepClock(), ids: CountingIds(),
            diagnostics: Diagnostics(process: "test", threshold: .error, clock: StepClock()))
        try worker.start()
        defer {
            held.letGo()
            worker.stop()
        }
        let context = try ZMQContext()
        var feed = try FeedTap(context, feed: endpoints.feed)
        let commands = try DealerClient(context, endpoints.commands)
        let reads = try DealerClient(context, endpoints.log)

        let registration = JSONValue.object([
            "id": "c1", "type": "RegisterUser",
            "data": .object(["userId": "u1", "name": "Ann", "email": "ann@example.com"]),
        ])
        try commands.send(registration)
        // Committed (the writer's own connection sees it), not yet flushed.
        let deadline = ContinuousClock.now + .milliseconds(patienceMilliseconds)
        while horizon.committedHead < 2 && ContinuousClock.now < deadline { usleep(2_000) }
        #expect(horizon.committedHead == 2)
        #expect(try SQLiteEventStore(path: path).headPosition() == 2, "the commit is in the file")
        #expect(horizon.durableHead == 0)

        let page = try reads.request(.object(["id": "r1", "type": "ReadLog", "from": 1, "limit": 10]))
        #expect(page["events"] == .array([]), "ReadLog served events no flush covered")
        #expect(page["head"] == .int(0))
        // Through the stage, `Status` is answered meanwhile, from the durable head; inline,
        // the command loop itself waits in the flush, and `Status` waits for it.
        let status = try DealerClient(context, endpoints.commands)
        try status.send(.object(["id": "s1", "type": "Status"]))
        // The same command again (a client that gave up waiting): its first record is found,
        // committed but not durable, and that answer waits for the flush too.
        try commands.send(registration)
        usleep(100_000)
        #expect(try !commands.hasReply(), "the command or its retry was answered before the flush")
        if inline {
            #expect(try !status.hasReply(), "Status answered while the command loop was in the inline flush")
        } else {
            let early = try WorkerStatus(json: try #require(try status.receive()["result"]))
            #expect(early.head == 0, "Status named a head no flush covered")
        }
        try feed.take(within: 200) { !$0.isEmpty }
        #expect(feed.messages.isEmpty, "the feed published before the flush")

        held.letGo()
        for _ in 1...2 {
            let reply = try commands.receive()
            #expect(reply["id"] == "c1")
            #expect(reply["ok"] == true && reply["position"] == .int(2))
        }
        #expect(try SQLiteEventStore(path: path).headPosition() == 2, "the retry appended nothing")
        #expect(horizon.durableHead == 2)
        if inline {
            let late = try WorkerStatus(json: try #require(try status.receive()["result"]))
            #expect(late.head == 2)
        }
        // The user's event; the e-mail claim (position 2) is on no feed topic.
        try feed.take { !$0.isEmpty }
        #expect(feed.messages.map(\.topic) == ["users"])
        #expect(feed.messages.map(\.position) == [1])
        let after = try reads.request(.object(["id": "r2", "type": "ReadLog", "from": 1, "limit": 10]))
        #expect(after["head"] == .int(2))
        #expect(after["events"]?.arrayValue?.count == 2)
    }
}
