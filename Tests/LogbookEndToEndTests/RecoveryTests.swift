import Foundation
import Glibc
import LogbookApplication
import LogbookClient
import LogbookFeed
import LogbookJSON
import LogbookWire
import Testing

/// The guarantees of ARCHITECTURE §8 across crashes and restarts: the query process killed
/// with SIGKILL, the worker killed with SIGKILL under load, the worker restarted under a
/// running query process, a query process started before the worker or far behind it, and
/// one command id sent by many clients at once.
@Suite("End to end: recovery", .serialized)
struct RecoveryTests {
    /// The checkpoint the query process started from, as its last start line says.
    static func startCheckpoint(_ cluster: ServiceCluster) throws -> Int64 {
        let line = try #require(
            cluster.stderr(of: "query").split(separator: "\n").last { $0.contains("msg=\"query process started\"") })
        let field = try #require(line.split(separator: " ").first { $0.hasPrefix("checkpoint=") })
        return try #require(Int64(field.dropFirst("checkpoint=".count)))
    }

    @Test("the query process killed with SIGKILL catches up after a restart, applying each event once")
    func queryKilled() async throws {
        let cluster = try await ServiceCluster.started()
        let client = try cluster.client()
        defer { client.close() }
        try await FeedTests.sendMixedTraffic(client, round: 1, count: 6)
        let firstHead = try await cluster.head()
        let before = try await cluster.queryStatus(after: firstHead)
        let firstLog = try await cluster.wholeLog()
        #expect(before["checkpoint"] == .int(Int(firstHead)))
        #expect(before["eventsApplied"] == .int(firstLog.count { $0.topic != nil }))
        #expect(before["readModels"] == expectedCounts(firstLog))

        // Killed while commands keep coming; more are sent while it is down.
        let burst = Task {
            for index in 0..<40 {
                _ = try await client.send(type: "AddProduct", data: Fixture.product("burst\(index)"))
                if index % 4 == 0 {
                    _ = try await client.send(type: "RegisterUser", data: Fixture.user("burst\(index)"))
                    _ = try await client.send(
                        type: "PurchaseProduct",
                        data: Fixture.purchase("ob\(index)", user: "burst\(index)", product: "burst\(index)"))
                }
            }
        }
        _ = await eventually { (try? await cluster.head()).map { $0 > firstHead + 20 } ?? false }
        #expect(cluster.stopQuery(SIGKILL) == SIGKILL)
        try await burst.value
        _ = try await client.send(type: "AddProduct", data: Fixture.product("while-down"))
        _ = try await client.send(type: "RegisterUser", data: Fixture.user("down-user"))
        _ = try await client.send(type: "DeleteUser", data: ["userId": "u1-0"])
        _ = try await client.send(type: "DeletePost", data: ["postId": "post1-2"])
        _ = try await client.send(type: "RemoveProduct", data: ["productId": "burst1"])

        try await cluster.startQuery()
        let restartedAt = try Self.startCheckpoint(cluster)
        let log = try await cluster.wholeLog()
        let head = try #require(log.last?.position)
        let after = try await cluster.queryStatus(after: head)
        #expect(after["checkpoint"] == .int(Int(head)))
        // The new process applied exactly the events after its stored checkpoint: none twice.
        #expect(after["eventsApplied"] == .int(log.count { $0.topic != nil && $0.position > restartedAt }))
        #expect(restartedAt >= firstHead && restartedAt <= head)
        #expect(after["readModels"] == expectedCounts(log))

        // What was sent while it was down is there; what was deleted is gone.
        #expect(try await client.query(type: "GetProduct", data: ["productId": "while-down"]).result["stock"] == 10)
        #expect(
            try await client.query(type: "GetUser", data: ["userId": "down-user"]).result["name"] == "User down-user")
        let products = try await client.query(type: "ListProducts", data: ["perPage": 100]).result
        #expect(products["total"] == .int(6 + 40 + 1 - 1))
        let users = try await client.query(type: "ListUsers", data: ["perPage": 100]).result
        #expect(users["total"] == .int(3 + 10 + 1 - 1))
        let buyerOrders = try await client.query(type: "ListOrders", data: ["userId": "burst8"]).result
        #expect(buyerOrders["items"]?.arrayValue?.compactMap { $0["orderId"] } == ["ob8"])

        // The same answers as read models rebuilt from position 1.
        let restarted = try await ReadModelSnapshot.read(of: cluster, after: head)
        let rebuild = try await cluster.run(["rebuild"])
        #expect(rebuild.status == 0, "\(rebuild.stdout) \(rebuild.stderr)")
        let rebuilt = try await ReadModelSnapshot.read(of: cluster, after: head)
        #expect(restarted == rebuilt)
        #expect(try await client.status(of: .queries)["readModels"] == expectedCounts(log))
        #expect(cluster.errorLines(of: "query").isEmpty, "\(cluster.stderr(of: "query"))")
    }

    /// What one sending client did: the ids it sent (in order) and the receipts it got.
    struct SenderRecord: Sendable {
        var sent: [(id: String, type: String, data: JSONObject)] = []
        var acknowledged: [String: CommandReceipt] = [:]
    }

    static func command(_ sender: Int, _ index: Int) -> (id: String, type: String, data: JSONObject) {
        let id = "k\(sender)-\(index)"
        return index % 3 == 2
            ? ("cmd-\(id)", "RegisterUser", Fixture.user(id)) : ("cmd-\(id)", "AddProduct", Fixture.product(id))
    }

    @Test("the worker killed with SIGKILL under load loses no acknowledged command, and retries append nothing")
    func workerKilled() async throws {
        let cluster = try await ServiceCluster.started()
        let acknowledged = Shared(0)
        let records = Task {
            try await withThrowingTaskGroup(of: SenderRecord.self) { group in
                for sender in 0..<4 {
                    group.addTask {
                        let client = try cluster.client(timeout: .milliseconds(1_500), attempts: 1)
                        defer { client.close() }
                        var record = SenderRecord()
                        // Two requests in flight per sender, so some are cut off mid-way.
                        for index in stride(from: 0, to: 2_000, by: 2) {
                            let pair = [Self.command(sender, index), Self.command(sender, index + 1)]
                            record.sent += pair
                            let results = await withTaskGroup(of: (String, CommandReceipt?).self) { inner in
                                for command in pair {
                                    inner.addTask {
                                        let receipt = try? await client.send(
                                            type: command.type, data: command.data, commandId: command.id)
                                        return (command.id, receipt)
                                    }
                                }
                                var results: [(String, CommandReceipt?)] = []
                                for await result in inner { results.append(result) }
                                return results
                            }
                            var failed = false
                            for (id, receipt) in results {
                                if let receipt {
                                    record.acknowledged[id] = receipt
                                    acknowledged.update { $0 += 1 }
                                } else {
                                    failed = true
                                }
                            }
                            if failed { break }
                        }
                        return record
                    }
                }
                var all: [SenderRecord] = []
                for try await record in group { all.append(record) }
                return all
            }
        }
        let loaded = await eventually(within: patience) { acknowledged.value >= 300 }
        #expect(loaded, "only \(acknowledged.value) commands were acknowledged")
        #expect(cluster.stopWorker(SIGKILL) == SIGKILL)
        let senders = try await records.value
        let receipts = senders.reduce(into: [String: CommandReceipt]()) { $0.merge($1.acknowledged) { a, _ in a } }
        let sent = senders.flatMap(\.sent)
        #expect(receipts.count >= 300)
        #expect(receipts.count < sent.count, "the kill cut no command off")

        try await cluster.startWorker()
        let log = try await cluster.wholeLog()
        #expect(log.map(\.position) == Array(1...Int64(log.count)))
        let byPosition = Dictionary(uniqueKeysWithValues: log.map { ($0.position, $0) })
        for (id, receipt) in receipts {
            for event in receipt.events {
                #expect(byPosition[event.position]?.envelope == event.envelope, "\(id) lost position \(event.position)")
            }
        }
        // Each command id in the log holds one command's events and no more.
        let logged = Dictionary(grouping: log, by: \.metadata.commandId)
        for (id, events) in logged {
            let type = try #require(sent.first { $0.id == id }?.type)
            #expect(events.count == (type == "RegisterUser" ? 2 : 1), "\(id)")
        }

        // Resending everything with the same ids: acknowledged ones get their first reply
        // back and append nothing; only commands the log never got are appended.
        let client = try cluster.client()
        defer { client.close() }
        for command in sent {
            let again = try await client.send(type: command.type, data: command.data, commandId: command.id)
            if let first = receipts[command.id] {
                #expect(again == first, "\(command.id) was not answered with its first outcome")
            }
        }
        let missing = sent.filter { logged[$0.id] == nil }
        let expectedGrowth = missing.reduce(0) { $0 + ($1.type == "RegisterUser" ? 2 : 1) }
        let after = try await cluster.wholeLog()
        #expect(after.count == log.count + expectedGrowth)
        #expect(Array(after.prefix(log.count)).map(\.envelope) == log.map(\.envelope))
        #expect(Set(after.map(\.metadata.commandId)) == Set(sent.map(\.id)))
        for (id, events) in Dictionary(grouping: after, by: \.metadata.commandId) {
            let type = try #require(sent.first { $0.id == id }?.type)
            #expect(events.count == (type == "RegisterUser" ? 2 : 1), "\(id) appended twice")
        }
        let verify = try await runLogbook(["verify", "--data-dir", cluster.workerDataDirectory])
        #expect(verify.status == 0, "\(verify.stdout)")
        #expect(try verify.json() == ["ok": true, "events": .int(after.count)])

        // The query process ran through it all: it applied every published event once,
        // including those committed but never published before the kill.
        let head = try #require(after.last?.position)
        let status = try await cluster.queryStatus(after: head)
        #expect(status["checkpoint"] == .int(Int(head)))
        #expect(status["eventsApplied"] == .int(after.count { $0.topic != nil }))
        #expect(status["readModels"] == expectedCounts(after))
    }

    @Test("the worker restarted under a running query process: previous marks restart at the head, no hole, no repeat")
    func workerRestarted() async throws {
        let cluster = try await ServiceCluster.started()
        let client = try cluster.client()
        defer { client.close() }
        let recorder = RawFeedRecorder(feed: cluster.feed)
        defer { recorder.stop() }
        let subscribed = try await recorder.waitUntilSubscribed { attempt in
            _ = try await client.send(type: "AddProduct", data: Fixture.product("probe\(attempt)"))
        }
        try #require(subscribed)
        try await FeedTests.sendMixedTraffic(client, round: 1, count: 5)
        let restartHead = try await cluster.head()
        try await cluster.queryStatus(after: restartHead)

        let snapshotBefore = try await ReadModelSnapshot.read(of: cluster, after: restartHead)
        #expect(cluster.stopWorker(SIGTERM) == 0)
        // While the worker is down the read side keeps answering what it has, and a query
        // for a position it cannot reach says so.
        #expect(try await ReadModelSnapshot.read(of: cluster, after: restartHead) == snapshotBefore)
        let unreachable = await refusal {
            try await client.query(type: "ListUsers", minPosition: restartHead + 1, timeoutMs: 300)
        }
        #expect(unreachable?.code == "timeout")
        #expect(
            unreachable?.details == ["minPosition": .int(Int(restartHead + 1)), "position": .int(Int(restartHead))])
        try await cluster.startWorker()
        let resubscribed = try await recorder.waitUntilSubscribed { attempt in
            _ = try await client.send(type: "AddProduct", data: Fixture.product("again\(attempt)"))
        }
        try #require(resubscribed)
        try await FeedTests.sendMixedTraffic(client, round: 2, count: 5)
        _ = try await client.send(type: "DeletePost", data: ["postId": "post1-0"])
        let log = try await cluster.wholeLog()
        let head = try #require(log.last?.position)
        let lastPublished = try #require(log.last { $0.topic != nil }?.position)

        let status = try await cluster.queryStatus(after: head)
        #expect(status["checkpoint"] == .int(Int(head)))
        // One process all along: it applied every published event exactly once.
        #expect(status["eventsApplied"] == .int(log.count { $0.topic != nil }))
        #expect(status["readModels"] == expectedCounts(log))

        // Raw feed: before the restart the marks started at 0, after it at the head the new
        // worker found; each mark is the later of that and the topic's last earlier position.
        _ = await eventually {
            recorder.received.contains { (try? JSONParser.parse($0[1]))?["position"] == .int(Int(lastPublished)) }
        }
        var positions: [Int64] = []
        for frames in recorder.received {
            let envelope = try #require(try JSONParser.parse(frames[1]).objectValue)
            let position = Int64(try #require(envelope["position"]?.intValue))
            let start = position > restartHead ? restartHead : 0
            var expected = JSONObject()
            for topic in FeedTopic.allCases {
                let last = log.last { $0.topic == topic && $0.position < position }?.position ?? 0
                expected[topic.rawValue] = .int(Int(max(start, last)))
            }
            #expect(envelope["previous"] == .object(expected), "previous marks of position \(position)")
            positions.append(position)
        }
        #expect(positions.contains { $0 > restartHead } && positions.contains { $0 <= restartHead })
        #expect(positions == positions.sorted() && Set(positions).count == positions.count)

        // And the read models answer as if rebuilt from scratch.
        let live = try await ReadModelSnapshot.read(of: cluster, after: head)
        let rebuild = try await cluster.run(["rebuild"])
        #expect(rebuild.status == 0, "\(rebuild.stdout) \(rebuild.stderr)")
        #expect(try await ReadModelSnapshot.read(of: cluster, after: head) == live)
        #expect(cluster.errorLines(of: "worker").isEmpty && cluster.errorLines(of: "query").isEmpty)
    }
}

extension RecoveryTests {
    @Test("a query process started before the worker catches up once the worker is there")
    func queryBeforeWorker() async throws {
        let cluster = try ServiceCluster()
        try await cluster.startQuery()
        let client = try cluster.client()
        defer { client.close() }
        #expect(try await client.query(type: "ListProducts").result["total"] == 0)
        try await cluster.startWorker()
        try await FeedTests.sendMixedTraffic(client, round: 1, count: 4)
        let log = try await cluster.wholeLog()
        let head = try #require(log.last?.position)
        let status = try await cluster.queryStatus(after: head)
        #expect(status["eventsApplied"] == .int(log.count { $0.topic != nil }))
        #expect(status["readModels"] == expectedCounts(log))
        #expect(cluster.errorLines(of: "query").isEmpty, "\(cluster.stderr(of: "query"))")
    }

    @Test("one command id sent by many clients at once is appended once, and every client gets that outcome")
    func sameIdFromManyClients() async throws {
        let cluster = try await ServiceCluster.started()
        let receipts = try await withThrowingTaskGroup(of: CommandReceipt.self) { group in
            for sender in 0..<12 {
                group.addTask {
                    let client = try cluster.client()
                    defer { client.close() }
                    // Different data under one id: the id decides, the first decision stands.
                    let product = Fixture.product(sender.isMultiple(of: 2) ? "shared" : "other\(sender)")
                    return try await client.send(type: "AddProduct", data: product, commandId: "same-id")
                }
            }
            var receipts: [CommandReceipt] = []
            for try await receipt in group { receipts.append(receipt) }
            return receipts
        }
        #expect(receipts.count == 12)
        #expect(Set(receipts.map(\.position)) == [1])
        #expect(receipts.allSatisfy { $0 == receipts[0] })
        let log = try await cluster.wholeLog()
        #expect(log.count == 1)
        #expect(log.first?.metadata.commandId == "same-id")
        let client = try cluster.client()
        defer { client.close() }
        let status = try await client.status(of: .commands)
        #expect(status["commands"]?["accepted"] == 12)
        #expect(status["commands"]?["retries"] == 11)
        #expect(status["published"] == 1)
        let query = try await cluster.queryStatus(after: 1)
        #expect(query["eventsApplied"] == 1)
    }
}

extension RecoveryTests {
    /// Opt-in (about a minute on a debug build): set LOGBOOK_E2E_SLOW=1. Fails today: the
    /// follower asks for pages of 2,000 events, one such page of long posts is ~72 MB, and
    /// `LogReadChannel` drops replies above 64 MiB, so the catch-up retries the same page forever.
    static let slowTestsWanted = ProcessInfo.processInfo.environment["LOGBOOK_E2E_SLOW"] != nil

    @Test(
        "a query process that starts behind more than 64 MiB of events catches up",
        .enabled(if: slowTestsWanted, "slow: set LOGBOOK_E2E_SLOW=1"))
    func catchUpOverLargeEvents() async throws {
        let cluster = try ServiceCluster()
        try await cluster.startWorker()
        let client = try cluster.client(timeout: .seconds(20), attempts: 1)
        defer { client.close() }
        _ = try await client.send(type: "RegisterUser", data: Fixture.user("writer"))
        // 50,000 characters, the most a post may hold; a control character is written as
        // \u0001, so each event is about 300 KB of JSON and 240 of them about 72 MB.
        let content = String(repeating: "\u{1}", count: 50_000)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for batch in 0..<8 {
                group.addTask {
                    for index in 0..<30 {
                        _ = try await client.send(
                            type: "CreatePost",
                            data: Fixture.post("long\(batch)-\(index)", author: "writer", content: content))
                    }
                }
            }
            try await group.waitForAll()
        }
        let head = try await cluster.head()
        #expect(head == 2 + 240)

        try await cluster.startQuery()
        let reader = try cluster.patientClient()
        defer { reader.close() }
        let answer = await refusalOrAnswer {
            try await reader.query(
                type: "ListPosts", data: ["perPage": 1], minPosition: head,
                timeoutMs: patientQueryMilliseconds)
        }
        #expect(answer?["total"] == 240, "the query process did not catch up: \(cluster.stderr(of: "query"))")
    }
}
