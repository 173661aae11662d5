import Foundation
import LogbookApplication
import LogbookDomain
import LogbookFeed
import LogbookJSON
import LogbookMemory
import LogbookServer
import LogbookTestSupport
import LogbookWire
import LogbookZMQ
import Testing

/// The gap-free follower against a real worker log socket (over an in-memory log) and a
/// feed the test publishes itself, so it can drop, repeat and damage messages at will.
@Suite("FeedFollower: holes, repeats and damaged messages")
struct FeedFollowerTests {
    /// A log with a worker serving `ReadLog` on it, and a PUB socket the test controls.
    final class Rig: @unchecked Sendable {
        let store = InMemoryEventStore()
        let handler: CommandHandler
        let worker: WorkerService
        let context: ZMQContext
        let feed: String
        let log: String
        private var counter = 0

        /// Holds the ipc socket files; removed with the rig.
        let directory: URL

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "logbook-follower-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let base = "ipc://\(directory.path)/socket"
            feed = base + "-test-feed"
            log = base + "-log"
            handler = CommandHandler(store: store, clock: StepClock(), ids: CountingIds(), buckets: .forTests)
            let store = self.store
            worker = try WorkerService(
                endpoints: ServiceEndpoints(
                    commands: base + "-commands", feed: base + "-worker-feed", queries: base + "-queries", log: log),
                openStore: { () throws(EventStoreError) -> any EventStore in store }, buckets: .forTests,
                clock: StepClock(), ids: CountingIds(),
                diagnostics: Diagnostics(process: "test", threshold: .error, clock: StepClock()))
            try worker.start()
            context = try ZMQContext()
        }

        deinit {
            worker.stop()
            try? FileManager.default.removeItem(at: directory)
        }

        /// Sends a command to the log directly; returns its events.
        @discardableResult
        func send(_ type: String, _ data: JSONValue) -> [RecordedEvent] {
            counter += 1
            let outcome = handler.handle(CommandRequest(commandId: "c\(counter)", type: type, data: data))
            return outcome.accepted?.events ?? []
        }

        func event(at position: Int64) throws -> RecordedEvent {
            try #require(try store.read(fromPosition: position, limit: 1, categories: nil).first)
        }

        /// The feed message the worker would publish for `event`, with the given marks.
        func message(_ event: RecordedEvent, previous: [FeedTopic: Int64]) throws -> [[UInt8]] {
            guard case .object(var envelope) = try WireEncoding.envelope(event) else { throw RigError.notAnObject }
            var marks = JSONObject()
            for topic in FeedTopic.allCases { marks[topic.rawValue] = .int(Int(previous[topic] ?? 0)) }
            envelope["previous"] = .object(marks)
            let topic = try #require(FeedTopic(category: event.category))
            return [Array(topic.rawValue.utf8), JSONWriter.bytes(.object(envelope))]
        }
    }

    enum RigError: Error { case notAnObject }

    /// Waits (bounded) for the subscriber to have something, then takes the next batch.
    static func nextLive(_ follower: inout FeedFollower) throws -> FeedBatch {
        _ = try ZMQPoll.wait([follower.readable], timeoutMilliseconds: 3_000)
        return try follower.next()
    }

    static func product(_ id: String, stock: Int = 5) -> JSONValue {
        ["productId": .string(id), "name": "Tea", "price": "1.00", "category": "food", "stock": .int(stock)]
    }

    /// A user (1) with its e-mail claim (2, in no topic), products 3 and 4, a purchase
    /// (5, 6: the product's stock and the order) and a restock (7).
    static func sendSevenEvents(_ rig: Rig) {
        rig.send("RegisterUser", ["userId": "u1", "name": "Ann", "email": "ann@example.com"])  // 1 user, 2 email
        rig.send("AddProduct", Self.product("p1"))  // 3
        rig.send("AddProduct", Self.product("p2"))  // 4
        rig.send("PurchaseProduct", ["orderId": "o1", "userId": "u1", "productId": "p1", "quantity": 1])  // 5, 6
        rig.send("RestockProduct", ["productId": "p1", "quantity": 2])  // 7
    }

    @Test("catches up from the log, takes live messages, fills a hole from the log, drops repeats")
    func holesAndRepeats() throws {
        let rig = try Rig()
        Self.sendSevenEvents(rig)

        let publisher = try ZMQSocket(rig.context, .publisher)
        try publisher.bind(rig.feed)
        var follower = try FeedFollower(rig.context, feed: rig.feed, log: rig.log, topics: [.products], cursor: 2)
        do {
            let value = follower.needsCatchUp
            #expect(value)
        }
        let caughtUp = try follower.next()
        #expect(caughtUp.events.map(\.position) == [3, 4, 5, 7])
        #expect(caughtUp.through == 7)
        do {
            let value = follower.needsCatchUp
            #expect(!value)
        }
        Thread.sleep(forTimeInterval: 0.2)  // let the subscription reach the publisher

        rig.send("RestockProduct", ["productId": "p2", "quantity": 1])  // 8
        rig.send("RestockProduct", ["productId": "p1", "quantity": 1])  // 9
        rig.send("AddProduct", Self.product("p3"))  // 10
        try publisher.send(try rig.message(try rig.event(at: 8), previous: [.products: 7, .orders: 6, .users: 1]))
        #expect(try Self.nextLive(&follower).events.map(\.position) == [8])

        // 9 is lost on the way; 10 names 9 as its topic's previous position: a hole.
        try publisher.send(try rig.message(try rig.event(at: 10), previous: [.products: 9, .orders: 6, .users: 1]))
        let atHole = try Self.nextLive(&follower)
        #expect(atHole.events.isEmpty)
        do {
            let value = follower.needsCatchUp
            #expect(value)
        }
        do {
            let value = follower.holesDetected
            #expect(value == 1)
        }
        let filled = try follower.next()
        #expect(filled.events.map(\.position) == [9, 10])
        do {
            let value = follower.cursor
            #expect(value == 10)
        }

        // A repeat of something already handed out is dropped without a fuss.
        try publisher.send(try rig.message(try rig.event(at: 8), previous: [.products: 7, .orders: 6, .users: 1]))
        #expect(try Self.nextLive(&follower).events.isEmpty)
        do {
            let value = follower.needsCatchUp
            #expect(!value)
        }
        do {
            let value = follower.holesDetected
            #expect(value == 1)
        }
    }

    @Test("a live batch ends at 16 MiB of messages: 120 queued posts of 200,000 bytes come in two batches")
    func liveBatchBoundedInBytes() throws {
        let rig = try Rig()
        rig.send("RegisterUser", ["userId": "u1", "name": "Ann", "email": "ann@example.com"])  // 1, 2
        let publisher = try ZMQSocket(rig.context, .publisher)
        try publisher.bind(rig.feed)
        var follower = try FeedFollower(rig.context, feed: rig.feed, log: rig.log, topics: [.posts], cursor: 0)
        #expect(try follower.next().through == 2)
        Thread.sleep(forTimeInterval: 0.2)  // let the subscription reach the publisher
        let content = String(repeating: "\u{1D11E}", count: 50_000)  // four UTF-8 bytes each
        var previous: Int64 = 0
        for index in 1...120 {
            let post: JSONValue = [
                "postId": .string("p\(index)"), "authorId": "u1", "title": "T", "content": .string(content),
            ]
            let event = try #require(rig.send("CreatePost", post).first)
            try publisher.send(try rig.message(event, previous: [.posts: previous, .users: 1]))
            previous = event.position
        }
        Thread.sleep(forTimeInterval: 1)  // ~24 MB over ipc: all of it queued before the first take
        let first = try Self.nextLive(&follower)
        // 16 MiB is 83 of these messages; the one that reaches it is the last.
        #expect(first.events.count == 84)
        var positions = first.events.map(\.position)
        while positions.count < 120 {
            let batch = try Self.nextLive(&follower)
            #expect(!batch.events.isEmpty)
            if batch.events.isEmpty { break }
            positions += batch.events.map(\.position)
        }
        #expect(positions == Array(3...122))
        do {
            let value = follower.holesDetected
            #expect(value == 0)
        }
    }

    @Test("a catch-up over many full pages, read ahead, hands out every event once, also after a reset")
    func catchUpOverManyPages() throws {
        let rig = try Rig()
        let count = 1_003
        for index in 0..<count { rig.send("AddProduct", Self.product("p\(index)")) }
        var follower = try FeedFollower(
            rig.context, feed: rig.feed, log: rig.log, topics: FeedTopic.allCases, cursor: 0, pageSize: 100)
        var seen: [Int64] = []
        var resetOnce = true
        while follower.needsCatchUp {
            let batch = try follower.next()
            seen += batch.events.map(\.position)
            #expect(batch.through == follower.cursor)
            if resetOnce {
                // Back to an earlier position with pages requested ahead: their replies must not count.
                resetOnce = false
                follower.reset(cursor: 57)
                seen.removeAll { $0 > 57 }
            }
        }
        #expect(seen == Array(1...Int64(count)))
        #expect(follower.cursor == Int64(count))
    }

    @Test("only the subscribed topics' marks count: a hole in another topic is not this subscriber's")
    func otherTopicsMarksIgnored() throws {
        let rig = try Rig()
        rig.send("RegisterUser", ["userId": "u1", "name": "Ann", "email": "ann@example.com"])  // 1, 2
        rig.send("AddProduct", Self.product("p1"))  // 3
        let publisher = try ZMQSocket(rig.context, .publisher)
        try publisher.bind(rig.feed)
        var follower = try FeedFollower(rig.context, feed: rig.feed, log: rig.log, topics: [.products], cursor: 0)
        #expect(try follower.next().events.map(\.position) == [3])
        Thread.sleep(forTimeInterval: 0.2)

        rig.send("PurchaseProduct", ["orderId": "o1", "userId": "u1", "productId": "p1", "quantity": 1])  // 4, 5
        rig.send("RestockProduct", ["productId": "p1", "quantity": 1])  // 6
        try publisher.send(try rig.message(try rig.event(at: 4), previous: [.products: 3, .users: 1]))
        #expect(try Self.nextLive(&follower).events.map(\.position) == [4])
        // The order at 5 is never seen by this subscriber; 6 says orders moved on (5): fine for it.
        try publisher.send(try rig.message(try rig.event(at: 6), previous: [.products: 4, .orders: 5, .users: 1]))
        #expect(try Self.nextLive(&follower).events.map(\.position) == [6])
        do {
            let value = follower.holesDetected
            #expect(value == 0)
        }
    }

    @Test("a damaged feed message sends the follower to the log instead of being trusted")
    func damagedMessage() throws {
        let rig = try Rig()
        rig.send("AddProduct", Self.product("p1"))  // 1
        let publisher = try ZMQSocket(rig.context, .publisher)
        try publisher.bind(rig.feed)
        var follower = try FeedFollower(rig.context, feed: rig.feed, log: rig.log, topics: [.products], cursor: 0)
        #expect(try follower.next().events.map(\.position) == [1])
        Thread.sleep(forTimeInterval: 0.2)

        rig.send("AddProduct", Self.product("p2"))  // 2
        try publisher.send([Array("products".utf8), Array("{not json".utf8)])
        #expect(try Self.nextLive(&follower).events.isEmpty)
        do {
            let value = follower.needsCatchUp
            #expect(value)
        }
        #expect(try follower.next().events.map(\.position) == [2])
        do {
            let value = follower.holesDetected
            #expect(value == 1)
        }
    }

    @Test("a follower of every topic catches up a page at a time, each kept as the worker's bytes")
    func catchUpByPages() throws {
        let rig = try Rig()
        Self.sendSevenEvents(rig)

        // A follower of some topics is not given pages: a page holds every topic's events.
        var some = try FeedFollower(rig.context, feed: rig.feed, log: rig.log, topics: [.products], cursor: 0)
        #expect(try some.nextLogPage() == nil)
        #expect(try some.next().events.map(\.position) == [3, 4, 5, 7])

        var follower = try FeedFollower(
            rig.context, feed: rig.feed, log: rig.log, topics: FeedTopic.allCases, cursor: 1, pageSize: 3)
        var pages: [[Int64]] = []
        var throughs: [Int64] = []
        var topical: [Int] = []
        while let (page, through) = try follower.nextLogPage() {
            #expect(page.reusableBytes() != nil, "a page in the worker's exact form is kept as its bytes")
            pages.append((0..<page.count).map(page.position(at:)))
            throughs.append(through)
            topical.append(page.topicalCount)
            #expect(follower.cursor == through)
            follower.recycle(page)
        }
        // The e-mail claim (2) is in the log's pages, but in no topic.
        #expect(pages == [[2, 3, 4], [5, 6, 7]])
        #expect(throughs == [4, 7])
        #expect(topical == [2, 3])
        do {
            let value = follower.needsCatchUp
            #expect(!value)
        }
        do {
            let value = follower.lastKnownHead
            #expect(value == 7)
        }

        // Caught up: the next events come live (or from `next()`), not as pages.
        rig.send("AddProduct", Self.product("p3"))  // 8
        #expect(try follower.nextLogPage() == nil)
    }

    @Test("a log socket that does not answer is reported, and the follower keeps its cursor")
    func silentLog() throws {
        let context = try ZMQContext()
        // Nothing is bound at these paths, so no socket file is created.
        let base = "ipc://\(FileManager.default.temporaryDirectory.path)/logbook-silent-\(UUID().uuidString)"
        var follower = try FeedFollower(
            context, feed: base + "-feed", log: base + "-log", topics: FeedTopic.allCases, cursor: 41,
            logTimeoutMilliseconds: 200)
        #expect(throws: FeedFollowError.self) { _ = try follower.next() }
        do {
            let value = follower.cursor
            #expect(value == 41)
        }
        do {
            let value = follower.needsCatchUp
            #expect(value)
        }
    }
}
