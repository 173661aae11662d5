import Foundation
import LogbookApplication
import LogbookClient
import LogbookJSON
import LogbookWire
import Testing

/// The change feed of ARCHITECTURE §5 against real processes: what a subscriber of some
/// topics sees (exactly its topics, in position order, once), what the raw PUB socket
/// carries (`[topic][envelope]` with `previous` marks that agree with the log), late joiners
/// and `--from`.
@Suite("End to end: the change feed", .serialized)
struct FeedTests {
    static let envelopeKeys = ["eventId", "position", "stream", "version", "type", "data", "metadata", "recordedAt"]

    /// Users, products, purchases (product + order events), restocks and posts, interleaved.
    static func sendMixedTraffic(_ client: LogbookClient, round: Int, count: Int) async throws {
        for index in 0..<count {
            let tag = "\(round)-\(index)"
            _ = try await client.send(type: "AddProduct", data: Fixture.product("p\(tag)", stock: 5))
            if index % 2 == 0 {
                _ = try await client.send(type: "RegisterUser", data: Fixture.user("u\(tag)"))
                _ = try await client.send(
                    type: "PurchaseProduct", data: Fixture.purchase("o\(tag)", user: "u\(tag)", product: "p\(tag)"))
                _ = try await client.send(type: "CreatePost", data: Fixture.post("post\(tag)", author: "u\(tag)"))
            } else {
                _ = try await client.send(
                    type: "RestockProduct", data: ["productId": .string("p\(tag)"), "quantity": 2])
            }
        }
    }

    @Test("a subscriber to one topic gets exactly that topic's events, in position order, each once")
    func oneTopic() async throws {
        let cluster = try await ServiceCluster.started()
        let client = try cluster.client()
        defer { client.close() }
        let follower = FollowerRecorder(feed: cluster.feed, log: cluster.log, topics: [.products], from: 1)
        defer { follower.stop() }

        try await Self.sendMixedTraffic(client, round: 1, count: 8)
        let log = try await cluster.wholeLog()
        let products = log.filter { $0.category == "product" }
        #expect(products.count == 8 + 4 + 4)  // added, purchased, restocked
        #expect(log.contains { $0.category == "order" } && log.contains { $0.category == "user" })

        let complete = await eventually { follower.received.count >= products.count }
        #expect(complete, "the follower got \(follower.received.count) of \(products.count) events")
        #expect(follower.problem == nil)
        #expect(follower.received.map(\.position) == products.map(\.position))
        #expect(follower.received.map(\.envelope) == products.map(\.envelope))

        // The command line's subscriber, from position 1: the same events, as JSON lines.
        let cli = try await cluster.run(["subscribe", "products", "--from", "1", "--limit", "\(products.count)"])
        #expect(cli.status == 0, "\(cli.stderr)")
        let lines = try cli.jsonLines()
        #expect(lines.map { JSONValue.object($0) } == products.map(\.envelope))
        #expect(lines.allSatisfy { $0.keys == Self.envelopeKeys })

        // Two topics: their events merged in position order, nothing else.
        let usersAndOrders = log.filter { $0.category == "user" || $0.category == "order" }
        let two = try await cluster.run(
            ["subscribe", "users,orders", "--from", "1", "--limit", "\(usersAndOrders.count)"])
        #expect(two.status == 0, "\(two.stderr)")
        #expect(try two.jsonLines().map { JSONValue.object($0) } == usersAndOrders.map(\.envelope))
    }

    @Test("the raw feed carries [topic][envelope] whose previous marks agree with the log")
    func rawFeed() async throws {
        let cluster = try await ServiceCluster.started()
        let client = try cluster.client()
        defer { client.close() }
        let recorder = RawFeedRecorder(feed: cluster.feed)
        defer { recorder.stop() }
        let subscribed = try await recorder.waitUntilSubscribed { attempt in
            _ = try await client.send(type: "AddProduct", data: Fixture.product("probe\(attempt)"))
        }
        try #require(subscribed, "no feed message arrived: \(recorder.problem ?? "")")

        try await Self.sendMixedTraffic(client, round: 2, count: 6)
        _ = try await client.send(type: "UpdateUserProfile", data: ["userId": "u2-0", "email": "new@example.com"])
        _ = try await client.send(type: "EditPost", data: ["postId": "post2-0", "title": "Edited"])
        _ = try await client.send(type: "DeleteUser", data: ["userId": "u2-2"])
        _ = try await client.send(type: "AddProduct", data: Fixture.product("last"))
        let log = try await cluster.wholeLog()
        let published = log.filter { $0.topic != nil }
        let lastPosition = try #require(published.last?.position)
        #expect(log.contains { $0.category == "email" }, "email claims are in the log")
        let complete = await eventually {
            recorder.received.contains { frames in
                frames.count == 2 && (try? JSONParser.parse(frames[1]))?["position"] == .int(Int(lastPosition))
            }
        }
        #expect(complete, "the last event did not reach the raw subscriber")

        var positions: [Int64] = []
        for frames in recorder.received {
            try #require(frames.count == 2, "a feed message is two frames, got \(frames.count)")
            let topic = String(decoding: frames[0], as: UTF8.self)
            var envelope = try #require(try JSONParser.parse(frames[1]).objectValue)
            #expect(envelope.keys == Self.envelopeKeys + ["previous"])
            let previous = try #require(envelope["previous"]?.objectValue)
            envelope["previous"] = nil
            let position = try #require(envelope["position"]?.intValue)
            let event = try #require(log.first { $0.position == Int64(position) })
            #expect(topic == event.topic?.rawValue, "position \(position) published on \(topic)")
            #expect(JSONValue.object(envelope) == event.envelope, "position \(position) differs from the log")
            // For each topic: the last position of that topic before this event (0 when none:
            // the worker started on an empty log, so its marks started at head 0).
            var expected = JSONObject()
            for name in FeedTopic.allCases {
                let last = log.last { $0.topic == name && $0.position < Int64(position) }?.position ?? 0
                expected[name.rawValue] = .int(Int(last))
            }
            #expect(previous == expected, "previous marks of position \(position)")
            positions.append(Int64(position))
        }
        // Every published event from the first one received on, once and in order; no email claim.
        let first = try #require(positions.first)
        #expect(positions == published.map(\.position).filter { $0 >= first })
    }

    @Test("a subscriber that joins late gets everything from --from 1, then live events, with no hole")
    func lateJoiner() async throws {
        let cluster = try await ServiceCluster.started()
        let client = try cluster.client()
        defer { client.close() }
        try await Self.sendMixedTraffic(client, round: 3, count: 6)
        let before = try await cluster.wholeLog().filter { $0.category == "product" }
        #expect(before.count == 6 + 3 + 3)

        let live = 7
        let subscriber = try cluster.background(
            ["subscribe", "products", "--from", "1", "--limit", "\(before.count + live)"])
        let caughtUp = await subscriber.waitForLines(before.count)
        #expect(caughtUp, "caught up with \(subscriber.lines.count) of \(before.count): \(subscriber.stderr)")
        #expect(try subscriber.jsonLines().map { JSONValue.object($0) } == before.map(\.envelope))

        // Now live: products interleaved with users (whose email claims are never published).
        for index in 0..<live {
            _ = try await client.send(type: "AddProduct", data: Fixture.product("live\(index)"))
            _ = try await client.send(type: "RegisterUser", data: Fixture.user("live\(index)"))
        }
        let status = await subscriber.waitForExit(within: patience)
        #expect(status == 0, "subscribe did not end after its limit: \(subscriber.stderr)")
        let all = try await cluster.wholeLog().filter { $0.category == "product" }
        #expect(all.count == before.count + live)
        #expect(try subscriber.jsonLines().map { JSONValue.object($0) } == all.map(\.envelope))
    }

    @Test("--from N starts exactly at position N, and resuming from the last position + 1 loses nothing")
    func fromPosition() async throws {
        let cluster = try await ServiceCluster.started()
        let client = try cluster.client()
        defer { client.close() }
        try await Self.sendMixedTraffic(client, round: 4, count: 6)
        let log = try await cluster.wholeLog()
        let products = log.filter { $0.category == "product" }
        let published = log.filter { $0.topic != nil }

        // N is a product event: it is the first printed.
        let third = products[2].position
        let fromThird = try await cluster.run(["subscribe", "products", "--from", "\(third)", "--limit", "3"])
        #expect(fromThird.status == 0, "\(fromThird.stderr)")
        #expect(
            try fromThird.jsonLines().compactMap { $0["position"]?.intValue }
                == products[2..<5].map { Int($0.position) })

        // N is an email claim (no topic): every topic starts at the next published event.
        let claim = try #require(log.first { $0.category == "email" && $0.position > 3 })
        let fromClaim = try await cluster.run(["subscribe", "--from", "\(claim.position)", "--limit", "4"])
        #expect(fromClaim.status == 0, "\(fromClaim.stderr)")
        #expect(
            try fromClaim.jsonLines().map { JSONValue.object($0) }
                == published.filter { $0.position > claim.position }.prefix(4).map(\.envelope))

        // Resume: the last position printed + 1 continues without a hole or a repeat.
        let firstPart = try await cluster.run(["subscribe", "products", "--from", "1", "--limit", "5"]).jsonLines()
        let lastPrinted = try #require(firstPart.last?["position"]?.intValue)
        let rest = try await cluster.run(
            ["subscribe", "products", "--from", "\(lastPrinted + 1)", "--limit", "\(products.count - 5)"])
        #expect(rest.status == 0, "\(rest.stderr)")
        #expect(
            (firstPart + (try rest.jsonLines())).map { JSONValue.object($0) } == products.map(\.envelope))

        // N past the head: nothing old, then the next event, whose position is N.
        let head = try await cluster.head()
        let waiting = try cluster.background(["subscribe", "products", "--from", "\(head + 1)", "--limit", "1"])
        let next = try await client.send(type: "AddProduct", data: Fixture.product("after-head"))
        #expect(next.position == head + 1)
        #expect(await waiting.waitForExit(within: patience) == 0, "\(waiting.stderr)")
        #expect(try waiting.jsonLines().compactMap { $0["position"]?.intValue } == [Int(head + 1)])
        #expect(try waiting.jsonLines().first?["stream"] == "product-after-head")
    }

    @Test("without --from, subscribe starts at the head: nothing already in the log is printed")
    func fromHead() async throws {
        let cluster = try await ServiceCluster.started()
        let client = try cluster.client()
        defer { client.close() }
        try await Self.sendMixedTraffic(client, round: 6, count: 4)
        let head = try await cluster.head()
        let subscriber = try cluster.background(["subscribe", "products", "--limit", "2"])
        // It reads the head when it starts, at a moment this test cannot see: keep adding
        // products until it has printed two.
        let counter = Shared(0)
        let printed = await eventually(within: patience) {
            let index = counter.update { value -> Int in
                value += 1
                return value
            }
            _ = try? await client.send(type: "AddProduct", data: Fixture.product("new\(index)"))
            return subscriber.lines.count >= 2
        }
        let sent = try await cluster.wholeLog().filter { $0.category == "product" && $0.position > head }.map(
            \.position)
        #expect(printed, "\(subscriber.stderr)")
        #expect(await subscriber.waitForExit() == 0)
        let positions = try subscriber.jsonLines().compactMap { $0["position"]?.intValue }.map(Int64.init)
        #expect(positions.count == 2)
        #expect(positions.allSatisfy { $0 > head }, "printed events that were in the log before it started")
        // Two consecutive products of the ones sent after the head.
        let first = try #require(sent.firstIndex(of: positions.first ?? 0))
        #expect(Array(sent[first..<min(first + 2, sent.count)]) == positions)
    }
}
