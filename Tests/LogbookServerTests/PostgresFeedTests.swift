import Foundation
import LogbookApplication
import LogbookFeed
import LogbookJSON
import LogbookPostgres
import LogbookTestSupport
import LogbookWire
import LogbookZMQ
import Testing

/// Scale-out on PostgreSQL in the test process: two workers on one database hint a feed
/// process, which publishes the log exactly as a SQLite worker publishes it; a lost hint
/// costs one poll; hints alone wake the feed; a query process follows the feed unchanged;
/// the feed keeps its place while the database is away.
@Suite(
    "Scale-out on PostgreSQL: workers hint, a feed process publishes", .serialized,
    .enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresFeedTests {
    /// Commands and the worker each goes to, alternating. Each stream is written and read
    /// through one worker only, so no worker decides on a stale cached state (a conflict
    /// would decide again and draw new event ids, and ids must match the reference's).
    static let script: [(worker: Int, command: JSONValue)] = [
        (0, Fixture.registerUser("u1", commandId: "c1")),
        (1, Fixture.registerUser("u2", commandId: "c2")),
        (0, Fixture.addProduct("p1", commandId: "c3")),
        (1, Fixture.addProduct("p2", commandId: "c4")),
        (
            0,
            Fixture.command(
                "c5", "PurchaseProduct", ["orderId": "o1", "userId": "u1", "productId": "p1", "quantity": 2])
        ),
        (1, Fixture.command("c6", "CreatePost", ["postId": "t1", "authorId": "u2", "title": "Hi", "content": "Text"])),
        (1, Fixture.command("c7", "RestockProduct", ["productId": "p2", "quantity": 4])),
        (0, Fixture.registerUser("u3", commandId: "c8")),
        (
            1,
            Fixture.command(
                "c9", "PurchaseProduct", ["orderId": "o2", "userId": "u2", "productId": "p2", "quantity": 1])
        ),
        (0, Fixture.command("c10", "UpdateProduct", ["productId": "p1", "name": "Green tea"])),
        (1, Fixture.command("c11", "EditPost", ["postId": "t1", "title": "Hello"])),
        (0, Fixture.command("c12", "DeleteUser", ["userId": "u3"])),
    ]

    /// The positions of the log's events that some feed topic carries (not email claims).
    static func topicPositions(_ store: PostgresEventStore) throws -> [Int64] {
        try store.read(fromPosition: 1, limit: 10_000, categories: nil)
            .filter { FeedTopic(category: $0.category) != nil }.map(\.position)
    }

    @Test("commands sent one by one to two workers are published by the feed byte for byte as a SQLite worker does")
    func sameBytesAsSQLiteWorker() throws {
        let rig = try PostgresFeedRig()
        defer { rig.stop() }
        let reference = try SQLiteWorkerRig()
        var tap = try FeedTap(rig.context, feed: rig.endpoints.feed)
        var referenceTap = try FeedTap(reference.context, feed: reference.endpoints.feed)
        // Time for the subscriptions to reach both publishers; a first message missed
        // anyway only narrows the comparison below, which says how much it covered.
        Thread.sleep(forTimeInterval: 0.3)
        let first = try rig.commandsClient(0)
        let second = try rig.commandsClient(1)
        let referenceWorker = try DealerClient(reference.context, reference.endpoints.commands)
        for (worker, command) in Self.script {
            let reply = worker == 0 ? try first.request(command) : try second.request(command)
            #expect(reply["ok"] == true, "\(reply)")
            #expect(reply == (try referenceWorker.request(command)), "the same events at the same positions")
        }
        let positions = try Self.topicPositions(rig.store())
        let last = try #require(positions.last)
        try tap.take { $0.last?.position == last }
        try referenceTap.take { $0.last?.position == last }
        #expect(tap.problem == nil, "\(tap.problem ?? "")")
        #expect(referenceTap.problem == nil, "\(referenceTap.problem ?? "")")

        let since = max(tap.messages.first?.position ?? last, referenceTap.messages.first?.position ?? last)
        let expected = Dictionary(uniqueKeysWithValues: referenceTap.messages.map { ($0.position, $0) })
        let compared = tap.messages.filter { $0.position >= since }
        #expect(compared.map(\.position) == positions.filter { $0 >= since })
        #expect(compared.count >= positions.count - 2, "compared \(compared.count) of \(positions.count) messages")
        for message in compared {
            let twin = try #require(expected[message.position], "the SQLite worker published \(message.position)")
            #expect(message.topic == twin.topic)
            #expect(
                message.envelope == twin.envelope,
                "at \(message.position): \(String(decoding: message.envelope, as: UTF8.self)) vs \(String(decoding: twin.envelope, as: UTF8.self))"
            )
        }
    }

    @Test(
        "commands pipelined to both workers at once, racing for one product: each acknowledged once, all published in order"
    )
    func interleavedWorkers() throws {
        let rig = try PostgresFeedRig()
        defer { rig.stop() }
        var tap = try FeedTap(rig.context, feed: rig.endpoints.feed)
        let first = try rig.commandsClient(0)
        let second = try rig.commandsClient(1)
        let stock = 1_000
        #expect(
            try first.request(
                Fixture.command(
                    "add", "AddProduct",
                    ["productId": "p", "name": "Tea", "price": "1.00", "category": "food", "stock": .int(stock)]))["ok"]
                == true)
        #expect(try first.request(Fixture.registerUser("b0", commandId: "reg-0"))["ok"] == true)
        #expect(try second.request(Fixture.registerUser("b1", commandId: "reg-1"))["ok"] == true)
        let perWorker = 30
        for round in 0..<perWorker {
            for worker in 0..<2 {
                let purchase = Fixture.command(
                    "buy-\(worker)-\(round)", "PurchaseProduct",
                    [
                        "orderId": .string("o-\(worker)-\(round)"), "userId": .string("b\(worker)"), "productId": "p",
                        "quantity": 1,
                    ])
                let registration = Fixture.registerUser("u-\(worker)-\(round)", commandId: "u-\(worker)-\(round)")
                if worker == 0 {
                    try first.send(purchase)
                    try first.send(registration)
                } else {
                    try second.send(purchase)
                    try second.send(registration)
                }
            }
        }
        var replies: [JSONObject] = []
        for _ in 0..<(2 * perWorker) {
            replies.append(try first.receive())
            replies.append(try second.receive())
        }

        let store = try rig.store()
        let log = try store.read(fromPosition: 1, limit: 10_000, categories: nil)
        #expect(log.map(\.position) == Array(1...Int64(log.count)), "positions without a hole")
        var bought = 0
        for reply in replies where reply["ok"] == true {
            let id = try #require(reply["id"]?.stringValue)
            let replied = (reply["events"]?.arrayValue ?? []).compactMap { $0.objectValue?["position"]?.intValue }
            let logged = log.filter { $0.metadata.commandId == id }.map { Int($0.position) }
            #expect(logged == replied, "\(id) is in the log exactly as acknowledged")
            if id.hasPrefix("buy-") { bought += 1 }
        }
        for reply in replies where reply["ok"] != true {
            #expect(reply["error"]?.objectValue?["code"] == "wrong_expected_version", "\(reply)")
        }
        #expect(bought > 0)
        let product = try #require(store.readStream("product-p", fromVersion: 1, limit: 1_000).last)
        #expect(product.data.contains("\"stock\":\(stock - bought)"), "each purchase decided on the stock before it")

        let positions = log.filter { FeedTopic(category: $0.category) != nil }.map(\.position)
        let last = try #require(positions.last)
        try tap.take { $0.last?.position == last }
        #expect(tap.problem == nil, "\(tap.problem ?? "")")
        let since = tap.messages.first?.position ?? last
        #expect(tap.messages.map(\.position) == positions.filter { $0 >= since })

        var follower = try FeedFollower(
            rig.context, feed: rig.endpoints.feed, log: rig.endpoints.log, topics: FeedTopic.allCases, cursor: 0)
        var followed: [Int64] = []
        let deadline = ContinuousClock.now + .milliseconds(patienceMilliseconds)
        while follower.cursor < log.count, ContinuousClock.now < deadline {
            followed += try follower.waitForNext(timeoutMilliseconds: 100).batch.events.map(\.position)
        }
        #expect(followed == positions, "a subscriber sees every event once, in position order")
    }
}
