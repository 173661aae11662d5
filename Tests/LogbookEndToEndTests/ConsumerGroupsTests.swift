import Foundation
import Glibc
import LogbookApplication
import LogbookClient
import LogbookJSON
import LogbookWire
import Testing

/// Consumer groups with real processes: a worker, `logbook run groups`, and `logbook
/// consume` members.
@Suite("End to end: consumer groups", .serialized)
struct ConsumerGroupsTests {
    @Test(
        "members share a group's events, each stream in order and with one member; a killed groups process loses no ack"
    )
    func sharingAndRestart() async throws {
        let cluster = try await clusterWithGroup("shop")
        let client = try cluster.client()
        defer { client.close() }
        for index in 1...8 { try await addProduct(client, "p\(index)", name: "Tea \(index)") }
        for _ in 1...2 {
            for index in 1...8 { try await restock(client, "p\(index)") }
        }
        let members = [try cluster.background(["consume", "shop"]), try cluster.background(["consume", "shop"])]
        #expect(await eventually { members.reduce(0) { $0 + $1.lines.count } >= 24 })
        let head = try await cluster.head()
        #expect(try await eventually { try await checkpoint(cluster, "shop") == head })

        var streamsByMember: [Set<String>] = []
        var handled: [Int64] = []
        for member in members {
            let envelopes = try member.jsonLines()
            var versions: [String: [Int]] = [:]
            for envelope in envelopes {
                versions[envelope["stream"]?.stringValue ?? "", default: []].append(envelope["version"]?.intValue ?? 0)
                handled.append(Int64(envelope["position"]?.intValue ?? 0))
            }
            for (stream, seen) in versions {
                #expect(seen == seen.sorted() && Set(seen).count == seen.count, "\(stream)")
            }
            streamsByMember.append(Set(versions.keys))
        }
        #expect(streamsByMember[0].isDisjoint(with: streamsByMember[1]))
        let products = try await cluster.wholeLog(topics: ["products"]).map(\.position)
        #expect(handled.sorted() == products)

        // Killed with everything acknowledged: after the restart nothing old comes again,
        // and the members, joining again by themselves, get what is new.
        cluster.stopGroups(SIGKILL)
        try await cluster.startGroups()
        #expect(try await checkpoint(cluster, "shop") == head)
        try await addProduct(client, "p9", name: "Tea 9")
        try await restock(client, "p1")
        #expect(await eventually { members.reduce(0) { $0 + $1.lines.count } >= 26 })
        let all = try members.flatMap { try $0.jsonLines() }.map { Int64($0["position"]?.intValue ?? 0) }
        #expect(all.count == 26)
        #expect(Set(all).count == 26)
        #expect(try await cluster.wholeLog(topics: ["products"]).map(\.position) == all.sorted())
    }

    @Test("an event that keeps failing is parked after maxDeliver attempts and holds only its stream")
    func poisonIsParked() async throws {
        let cluster = try await clusterWithGroup("mail", "--max-deliver", "2")
        let client = try cluster.client()
        defer { client.close() }
        try await addProduct(client, "good", name: "Tea")
        let poison = try await addProduct(client, "bad", name: "POISON")
        let held = try await restock(client, "bad")
        let after = try await restock(client, "good")

        let handledFile = cluster.directory.appendingPathComponent("handled.txt").path
        let script = """
            input=$(cat); case "$input" in *POISON*) exit 7;; esac; \
            echo "$LOGBOOK_POSITION $LOGBOOK_ATTEMPT $LOGBOOK_GROUP" >> \(handledFile)
            """
        let member = try cluster.background(["consume", "mail", "--exec", script])
        #expect(try await eventually { try await parked(cluster, "mail").count == 1 })
        let parkedEvents = try await parked(cluster, "mail")
        #expect(parkedEvents.first?["position"]?.intValue == Int(poison))
        #expect(parkedEvents.first?["attempts"]?.intValue == 2)
        #expect(parkedEvents.first?["lastFailure"]?.stringValue == "exit status 7")
        #expect(await eventually { handledLines(handledFile).count == 2 })
        #expect(handledLines(handledFile).map(\.position).sorted() == [1, after])
        #expect(handledLines(handledFile).allSatisfy { $0.attempt == 1 && $0.group == "mail" })
        #expect(try await checkpoint(cluster, "mail") == poison - 1)

        // Retried, it fails its two deliveries again and is parked again; skipped, its stream goes on.
        let retried = try await cluster.run(["groups", "retry", "mail", "\(poison)"])
        #expect(retried.status == 0, "\(retried.stdout)")
        #expect(try await eventually { try await groupShow(cluster, "mail")["redelivered"]?.intValue == 2 })
        #expect(try await eventually { try await parked(cluster, "mail").count == 1 })
        let skipped = try await cluster.run(["groups", "skip", "mail", "\(poison)"])
        #expect(skipped.status == 0, "\(skipped.stdout)")
        #expect(await eventually { handledLines(handledFile).count == 3 })
        #expect(handledLines(handledFile).map(\.position).contains(held))
        let head = try await cluster.head()
        #expect(try await eventually { try await checkpoint(cluster, "mail") == head })
        let notParked = try await cluster.run(["groups", "skip", "mail", "\(poison)"])
        #expect(notParked.status == 1)
        #expect(try notParked.json()["error"]?.objectValue?["code"] == "not_found")
        _ = await member.signal(SIGTERM)
    }

    @Test("admin requests: clear errors, a group created at the head gets nothing older, a stale ack changes nothing")
    func adminAndStale() async throws {
        let cluster = try ServiceCluster()
        try await cluster.startWorker()
        try await cluster.startGroups()
        let client = try cluster.client()
        defer { client.close() }
        try await addProduct(client, "old", name: "Tea")

        // Not a count at all: the command line refuses it (usage, exit 2); a count the groups
        // process does not allow: the reply names the setting (exit 1).
        let notACount = try await cluster.run(["groups", "create", "g", "--topics", "products", "--max-deliver", "0"])
        #expect(notACount.status == 2)
        #expect(notACount.stderr.contains("--max-deliver"))
        let badSettings = try await cluster.run([
            "groups", "create", "g", "--topics", "products", "--max-deliver", "1001",
        ])
        #expect(badSettings.status == 1)
        #expect(try badSettings.json()["error"]?.objectValue?["details"]?.objectValue?["field"] == "maxDeliver")
        let unknown = try await cluster.run(["groups", "show", "nope"])
        #expect(try unknown.json()["error"]?.objectValue?["code"] == "unknown_group")
        let badName = try await cluster.run(["groups", "create", "no spaces", "--topics", "products"])
        #expect(try badName.json()["error"]?.objectValue?["code"] == "invalid_input")

        let created = try await cluster.run(["groups", "create", "late", "--topics", "products", "--from", "head"])
        #expect(created.status == 0, "\(created.stdout) \(created.stderr)")
        let head = try await cluster.head()
        #expect(try created.json()["result"]?.objectValue?["checkpoint"]?.intValue == Int(head))
        let again = try await cluster.run(["groups", "create", "late", "--topics", "products"])
        #expect(try again.json()["error"]?.objectValue?["code"] == "already_exists")
        let consumeUnknown = try await cluster.run(["consume", "nope", "--limit", "1"])
        #expect(consumeUnknown.status == 1)
        #expect(consumeUnknown.stderr.contains("unknown_group"))

        let member = try cluster.background(["consume", "late", "--limit", "1"])
        let fresh = try await addProduct(client, "new", name: "Tea")
        #expect(await member.waitForExit() == 0)
        #expect(try member.jsonLines().map { $0["position"]?.intValue } == [Int(fresh)])

        // This client is no member: its ack of a position is stale and moves nothing.
        // consume exits 0 only once its acks are durable: the checkpoint is past the event.
        let checkpointBefore = try await checkpoint(cluster, "late")
        #expect(checkpointBefore == fresh)
        let reply = try await client.request(
            .groups, GroupRequestDocument.ack(id: "stale-1", group: "late", positions: [fresh]))
        #expect(reply["ok"] == true)
        #expect(reply["result"]?.objectValue?["stale"] == [.int(Int(fresh))])
        #expect(reply["result"]?.objectValue?["acked"] == [])
        #expect(try await checkpoint(cluster, "late") == checkpointBefore)
        // A second groups process on the same data directory (another endpoint) is refused.
        let second = try await runLogbook([
            "run", "groups", "--data-dir", cluster.directory.appendingPathComponent("groups").path, "--groups",
            "tcp://127.0.0.1:\(try FreePorts.take(1)[0])", "--feed", cluster.feed, "--log", cluster.log,
        ])
        #expect(second.status == 3)
        #expect(second.stderr.contains("another process (pid "), "\(second.stderr)")
        #expect(second.stderr.contains("serves \(cluster.directory.appendingPathComponent("groups").path)"))

        let deleted = try await cluster.run(["groups", "delete", "late"])
        #expect(deleted.status == 0)
        let listed = try await cluster.run(["groups", "list"])
        #expect(try listed.json()["result"]?.objectValue?["groups"] == [])
    }

    @Test("consume --exec holds one delivery at a time: the rest waits for it, not for ackWaitMs")
    func execHoldsOne() async throws {
        let cluster = try await clusterWithGroup("slow")
        let client = try cluster.client()
        defer { client.close() }
        for index in 1...3 { try await addProduct(client, "s\(index)", name: "Tea") }
        let gate = cluster.directory.appendingPathComponent("go").path
        let member = try cluster.background([
            "consume", "slow", "--limit", "3", "--exec", "while [ ! -e '\(gate)' ]; do sleep 0.05; done",
        ])
        // Three streams, one member running one command: it holds one, the others wait.
        #expect(
            try await eventually {
                let shown = try await groupShow(cluster, "slow")
                return shown["inFlight"] == 1 && shown["pending"] == 3 && shown["members"] == 1
            })
        #expect(FileManager.default.createFile(atPath: gate, contents: nil))
        #expect(await member.waitForExit() == 0, "\(member.stderr)")
        let shown = try await groupShow(cluster, "slow")
        #expect(shown["checkpoint"] == .int(Int(try await cluster.head())))
        #expect(shown["redelivered"] == 0)
    }

    @Test("the Swift client's consumer: acks, a nack delivered again with its next attempt, leaving")
    func swiftConsumer() async throws {
        let cluster = try await clusterWithGroup("shop")
        let client = try cluster.client()
        defer { client.close() }
        let first = try await addProduct(client, "tea", name: "Tea")
        let second = try await addProduct(client, "jam", name: "Jam")
        let third = try await restock(client, "tea")

        var seen: [(position: Int64, attempt: Int, stream: String)] = []
        var nacked = false
        for try await message in client.consume(group: "shop") {
            seen.append((message.position, message.attempt, message.event.stream))
            if message.position == second && !nacked {
                nacked = true
                message.nack(reason: "not yet")
            } else {
                message.ack()
            }
            let retried = seen.contains { $0.position == second && $0.attempt == 2 }
            if retried && Set(seen.map(\.position)).isSuperset(of: [first, third]) { break }
        }
        // The tea stream in order; jam failed once, then came again with attempt 2.
        #expect(seen.filter { $0.stream == "product-tea" }.map(\.position) == [first, third])
        #expect(seen.filter { $0.position == second }.map(\.attempt) == [1, 2])
        #expect(try await eventually { try await groupShow(cluster, "shop")["members"] == 0 })
        #expect(try await checkpoint(cluster, "shop") == third)
        let shown = try await groupShow(cluster, "shop")
        #expect(shown["nacked"] == 1)
        #expect(shown["acked"] == 3)

        var refused: (any Error)?
        do {
            for try await _ in client.consume(group: "nope") {}
        } catch {
            refused = error
        }
        guard case .rejected(let reply)? = refused as? LogbookClientError else {
            Issue.record("expected unknown_group, got \(String(describing: refused))")
            return
        }
        #expect(reply.code == "unknown_group")
    }

    // MARK: Helpers

    /// A worker and a groups process, and group `name` over the products topic created with
    /// `options`.
    func clusterWithGroup(_ name: String, _ options: String...) async throws -> ServiceCluster {
        let cluster = try ServiceCluster()
        try await cluster.startWorker()
        try await cluster.startGroups()
        let created = try await cluster.run(["groups", "create", name, "--topics", "products"] + options)
        try #require(created.status == 0, "\(created.stdout) \(created.stderr)")
        return cluster
    }

    @discardableResult
    func addProduct(_ client: LogbookClient, _ id: String, name: String) async throws -> Int64 {
        let receipt = try await client.send(
            type: "AddProduct",
            data: ["productId": .string(id), "name": .string(name), "price": "1.00", "category": "food", "stock": 5])
        return receipt.position
    }

    @discardableResult
    func restock(_ client: LogbookClient, _ id: String) async throws -> Int64 {
        try await client.send(type: "RestockProduct", data: ["productId": .string(id), "quantity": 1]).position
    }

    func groupShow(_ cluster: ServiceCluster, _ name: String) async throws -> JSONObject {
        let shown = try await cluster.run(["groups", "show", name])
        return try #require(try shown.json()["result"]?.objectValue, "\(shown.stdout) \(shown.stderr)")
    }

    func checkpoint(_ cluster: ServiceCluster, _ name: String) async throws -> Int64 {
        Int64(try await groupShow(cluster, name)["checkpoint"]?.intValue ?? -1)
    }

    func parked(_ cluster: ServiceCluster, _ name: String) async throws -> [JSONObject] {
        let listed = try await cluster.run(["groups", "parked", name])
        let events = try listed.json()["result"]?.objectValue?["events"]?.arrayValue ?? []
        return events.compactMap(\.objectValue)
    }

    func handledLines(_ path: String) -> [(position: Int64, attempt: Int, group: String)] {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ")
            guard words.count == 3, let position = Int64(words[0]), let attempt = Int(words[1]) else { return nil }
            return (position, attempt, String(words[2]))
        }
    }
}
