import Foundation
import Glibc
import LogbookApplication
import LogbookClient
import LogbookJSON
import LogbookTestSupport
import LogbookWire
import LogbookZMQ
import Testing

/// CURVE on the bus with real processes and real sockets (ARCHITECTURE §11): unknown keys
/// and plain clients get nothing, each role gets only what it may, a revoked key is cut off
/// after SIGHUP while the others go on.
@Suite("End to end: security on the bus", .serialized)
struct SecurityTests {
    static let batches = 10
    static let perBatch = 100

    @Test("an unknown key never completes a handshake: 1,010 attempts, every one refused, no reply, no feed message")
    func unknownKeysAreRefused() async throws {
        let (cluster, _, clients) = try await ServiceCluster.secured(["writer": .writer, "watcher": .reader])
        let admin = try #require(cluster.clientKeys)
        let writer = try #require(clients["writer"])
        let watcher = try #require(clients["watcher"])
        let endpoints = cluster.endpoints
        let outcome = try await offThePool("e2e-unknown-keys") { () throws -> UnknownKeyOutcome in
            let context = try ZMQContext()
            let adminSocket = try TestSocket(context, .dealer, endpoints.commands.endpoints[0], admin)
            let writerSocket = try TestSocket(context, .dealer, endpoints.commands.endpoints[0], writer)
            let watcherFeed = try TestSocket(context, .subscriber, endpoints.feed, watcher)
            var outcome = UnknownKeyOutcome(before: try Self.status(adminSocket))
            for batch in 0..<Self.batches {
                // Each attempt is a socket of its own with a fresh unknown key, which tries once
                // (no reconnect within the test) and sends at once: a command or a ReadLog.
                var strangers: [TestSocket] = []
                for index in 0..<Self.perBatch {
                    let stranger = try CurveClientKeys(keys: CurveKeyPair.generate(), serverKey: admin.serverKey)
                    let toLog = index % 2 == 1
                    let socket = try TestSocket(
                        context, .dealer, toLog ? endpoints.log : endpoints.commands.endpoints[0], stranger,
                        reconnect: 600_000)
                    try socket.send(
                        toLog
                            ? ["id": .string("r\(batch)-\(index)"), "type": "ReadLog", "from": 1]
                            : [
                                "id": .string("c\(batch)-\(index)"), "type": "AddProduct",
                                "data": .object(Fixture.product("stranger-\(batch)-\(index)")),
                            ])
                    strangers.append(socket)
                }
                let strangerFeed = try TestSocket(
                    context, .subscriber, endpoints.feed,
                    CurveClientKeys(keys: CurveKeyPair.generate(), serverKey: admin.serverKey), reconnect: 600_000)
                strangers.append(strangerFeed)
                let target = outcome.before.refused + (batch + 1) * (Self.perBatch + 1)
                var refused = 0
                for _ in 0..<500 {
                    refused = try Self.status(adminSocket).refused
                    if refused >= target { break }
                    usleep(20_000)
                }
                outcome.refusalsSeen = refused
                // A listed writer's command is published; the listed reader sees it, the strangers nothing.
                let sent = try writerSocket.ask([
                    "id": .string("w\(batch)"), "type": "AddProduct", "data": .object(Fixture.product("w\(batch)")),
                ])
                outcome.writerAccepted += sent?["ok"] == true ? 1 : 0
                outcome.watcherMessages += try watcherFeed.receive(within: 10_000) == nil ? 0 : 1
                outcome.attempts += strangers.count
                outcome.strangerMessages += strangers.filter(\.hasMessage).count
            }
            outcome.after = try Self.status(adminSocket)
            return outcome
        }
        #expect(outcome.attempts == Self.batches * (Self.perBatch + 1))
        #expect(outcome.strangerMessages == 0, "a stranger got a reply or a feed message")
        #expect(outcome.after.refused - outcome.before.refused >= outcome.attempts, "every attempt was refused")
        #expect(outcome.after.head == outcome.before.head + Int64(outcome.writerAccepted), "strangers appended")
        #expect(outcome.writerAccepted == Self.batches)
        #expect(outcome.watcherMessages == Self.batches, "the listed reader followed the feed meanwhile")
        print(
            "security: \(outcome.attempts) handshakes with unknown keys, \(outcome.after.refused - outcome.before.refused) refused, \(outcome.strangerMessages) answered"
        )

        // Every refusal is accounted for in the worker's stderr: a line, or a count of lines
        // held back, and never more than the limit's lines in one second.
        let accounted = await eventually(within: patience) {
            Self.refusalsLogged(cluster.stderr(of: "worker")) == outcome.after.refused
        }
        #expect(
            accounted, "logged: \(Self.refusalsLogged(cluster.stderr(of: "worker"))), refused: \(outcome.after.refused)"
        )
        var perSecond: [Substring: Int] = [:]
        for line in cluster.stderr(of: "worker").split(separator: "\n") where line.contains("msg=\"handshake refused\"")
        {
            perSecond[line.prefix(24), default: 0] += 1  // time=YYYY-MM-DDTHH:MM:SS
        }
        // The limit counts monotonic seconds, which straddle the wall clock's: at most two limits per line stamp.
        #expect((perSecond.values.max() ?? 0) <= 20, "\(perSecond.values.max() ?? 0) lines in one second")
    }

    @Test("plain clients get nothing; readers cannot write, writers cannot read; Status and Rebuild are the admin's")
    func rolesAndPlainClients() async throws {
        let (cluster, _, clients) = try await ServiceCluster.secured(["reader": .reader, "writer": .writer])
        let reader = try LogbookClient(endpoints: cluster.endpoints, attempts: 1, security: clients["reader"])
        let writer = try LogbookClient(endpoints: cluster.endpoints, attempts: 1, security: clients["writer"])
        defer {
            reader.close()
            writer.close()
        }
        do {
            _ = try await reader.send(type: "AddProduct", data: Fixture.product("tea"))
            Issue.record("a reader's command was accepted")
        } catch {
            #expect(error.rejectionCode == "unauthorized")
        }
        #expect(try await cluster.head() == 0, "a reader's command appended something")
        let sent = try await writer.send(type: "AddProduct", data: Fixture.product("tea"))
        _ = try await reader.readLog(from: 1)
        _ = try await reader.query(type: "GetProduct", data: ["productId": "tea"], minPosition: sent.position)

        let refusals: [(LogbookClient, ServerEndpoint, JSONObject)] = [
            (writer, .queries, ["id": "w-rebuild", "type": "Rebuild"]),
            (writer, .queries, ["id": "w-query", "type": "ListProducts", "data": [:]]),
            (writer, .log, ["id": "w-read", "type": "ReadLog", "from": 1]),
            (writer, .commands, ["id": "w-status", "type": "Status"]),
            (reader, .queries, ["id": "r-status", "type": "Status"]),
            (reader, .queries, ["id": "r-rebuild", "type": "Rebuild"]),
        ]
        for (client, server, request) in refusals {
            let reply = try await client.request(server, request)
            #expect(reply["ok"] == false, "\(request)")
            #expect(reply["error"]?.objectValue?["code"] == "unauthorized", "\(request): \(reply)")
        }
        let admin = try cluster.client()
        defer { admin.close() }
        let queryStatus = try QueryStatus(json: .object(try await admin.status(of: .queries)))
        #expect(queryStatus.rebuild == .idle && queryStatus.generation == 1, "a refused Rebuild started one")
        #expect(queryStatus.peers != nil)

        // Plain sockets on every server, and a writer's and a plain subscription to the feed,
        // against a reader's: a listed writer's command reaches the reader only.
        let endpoints = cluster.endpoints
        let writerKeys = try #require(writer.security)
        let readerKeys = try #require(reader.security)
        let (plainMessages, writerFeed, readerFeed) = try await offThePool("e2e-plain") {
            () throws -> (Int, Int, Int) in
            let context = try ZMQContext()
            let plain = try [endpoints.commands.endpoints[0], endpoints.queries, endpoints.log].map {
                try TestSocket(context, .dealer, $0, nil)
            }
            for socket in plain { try socket.send(["id": "plain", "type": "Status"]) }
            let plainFeed = try TestSocket(context, .subscriber, endpoints.feed, nil)
            let writerFeed = try TestSocket(context, .subscriber, endpoints.feed, writerKeys)
            let readerFeed = try TestSocket(context, .subscriber, endpoints.feed, readerKeys)
            let writerSocket = try TestSocket(context, .dealer, endpoints.commands.endpoints[0], writerKeys)
            var readerGot = 0
            for attempt in 0..<20 where readerGot == 0 {
                _ = try writerSocket.ask([
                    "id": .string("feed-\(attempt)"), "type": "AddProduct",
                    "data": .object(Fixture.product("feed-\(attempt)")),
                ])
                readerGot += try readerFeed.receive(within: 500) == nil ? 0 : 1
            }
            return ((plain + [plainFeed]).filter(\.hasMessage).count, writerFeed.hasMessage ? 1 : 0, readerGot)
        }
        #expect(readerFeed == 1, "the reader's subscription got nothing")
        #expect(plainMessages == 0, "a plain client got an answer or a feed message")
        #expect(writerFeed == 0, "a writer's subscription got a feed message")
        let workerStatus = try WorkerStatus(json: .object(try await admin.status(of: .commands)))
        #expect((workerStatus.peers?.refused ?? 0) >= 1, "the writer's subscription was refused at the handshake")
    }

    @Test("SIGHUP: a revoked key gets no further reply or feed message, a new key is admitted, the others go on")
    func revocation() async throws {
        let (cluster, keys, clients) = try await ServiceCluster.secured([
            "kept": .reader, "revoked": .reader, "writer": .writer,
        ])
        let kept = try #require(clients["kept"])
        let revoked = try #require(clients["revoked"])
        let writer = try #require(clients["writer"])
        let late = try keys.make("late", .reader, listed: false)
        let endpoints = cluster.endpoints
        let rebinds: @Sendable () -> Int = {
            cluster.stderr(of: "worker").components(separatedBy: "feed socket bound anew").count - 1
        }
        let outcome = try await offThePool("e2e-revocation") { () throws -> RevocationOutcome in
            let context = try ZMQContext()
            let keptLog = try TestSocket(context, .dealer, endpoints.log, kept)
            let revokedLog = try TestSocket(context, .dealer, endpoints.log, revoked)
            let keptFeed = try TestSocket(context, .subscriber, endpoints.feed, kept)
            let revokedFeed = try TestSocket(context, .subscriber, endpoints.feed, revoked)
            let writerSocket = try TestSocket(context, .dealer, endpoints.commands.endpoints[0], writer)
            var outcome = RevocationOutcome()
            let readLog: JSONObject = ["id": "read", "type": "ReadLog", "from": 1]
            outcome.revokedAnsweredBefore = try revokedLog.ask(readLog)?["ok"] == true
            var counter = 0
            func publish() throws -> Int64? {
                counter += 1
                let reply = try writerSocket.ask([
                    "id": .string("c\(counter)"), "type": "AddProduct", "data": .object(Fixture.product("p\(counter)")),
                ])
                return reply?["position"]?.intValue.map(Int64.init)
            }
            // Both subscriptions are live before the reload.
            for _ in 0..<20 where !(outcome.keptFedBefore && outcome.revokedFedBefore) {
                _ = try publish()
                if try keptFeed.receive(within: 500) != nil { outcome.keptFedBefore = true }
                if try revokedFeed.receive(within: 500) != nil { outcome.revokedFedBefore = true }
            }
            while try keptFeed.receive(within: 0) != nil {}
            while try revokedFeed.receive(within: 0) != nil {}

            let rebindsBefore = rebinds()
            try keys.revoke("revoked")
            try FileManager.default.copyItem(atPath: keys.folder + "/late", toPath: keys.clients + "/late")
            cluster.signalWorker(SIGHUP)
            for _ in 0..<500 where rebinds() == rebindsBefore { usleep(20_000) }
            outcome.rebound = rebinds() > rebindsBefore

            outcome.revokedAnsweredAfter = try revokedLog.ask(readLog, within: 2_000) != nil
            outcome.keptAnsweredAfter = try keptLog.ask(readLog)?["ok"] == true
            outcome.lateAnswered = try TestSocket(context, .dealer, endpoints.log, late).ask(readLog)?["ok"] == true
            // Publish until the kept subscription, reconnected through the new list, sees an event.
            for _ in 0..<50 where !outcome.keptFedAfter {
                outcome.lastPosition = try publish() ?? outcome.lastPosition
                outcome.keptFedAfter = try keptFeed.receive(within: 200) != nil
            }
            outcome.revokedFedAfter = revokedFeed.hasMessage
            return outcome
        }
        #expect(outcome.revokedAnsweredBefore && outcome.keptFedBefore && outcome.revokedFedBefore)
        #expect(outcome.rebound, "no re-bind of the feed after SIGHUP: \(cluster.stderr(of: "worker"))")
        #expect(!outcome.revokedAnsweredAfter, "the revoked key still got a reply")
        #expect(outcome.keptAnsweredAfter, "the kept key's connection was dropped")
        #expect(outcome.lateAnswered, "the key added by the reload was not admitted")
        #expect(outcome.keptFedAfter, "the kept subscription never got a feed message again")
        #expect(!outcome.revokedFedAfter, "the revoked subscription still got feed messages")
        #expect(cluster.stderr(of: "worker").contains("msg=\"allow-list reloaded\" keys=5"))
        // The query process (its own reader key) follows across the re-bind.
        try await cluster.queryStatus(after: outcome.lastPosition)
        let admin = try cluster.client()
        defer { admin.close() }
        let status = try WorkerStatus(json: .object(try await admin.status(of: .commands)))
        #expect((status.peers?.dropped ?? 0) >= 1, "the revoked key's request was not counted as dropped")
    }

    private static func status(_ socket: TestSocket) throws -> WorkerCounts {
        guard let reply = try socket.ask(["id": "status", "type": "Status"]),
            case .object(let result)? = reply["result"]
        else { throw ClusterError.notAnswering("worker Status") }
        let status = try WorkerStatus(json: .object(result))
        return WorkerCounts(head: status.head ?? 0, refused: status.peers?.refused ?? 0)
    }

    /// Refusals written to stderr: one per line, plus each count of lines held back.
    private static func refusalsLogged(_ stderr: String) -> Int {
        var total = 0
        for line in stderr.split(separator: "\n") {
            if line.contains("msg=\"handshake refused\"") { total += 1 }
            if line.contains("msg=\"handshake refusals not logged\""),
                let count = line.split(separator: " ").first(where: { $0.hasPrefix("count=") })
            {
                total += Int(count.dropFirst("count=".count)) ?? 0
            }
        }
        return total
    }
}

/// What the worker's Status says of the log and the handshakes.
struct WorkerCounts: Sendable {
    var head: Int64
    var refused: Int
}

/// What the unknown-key test saw.
struct UnknownKeyOutcome: Sendable {
    var before: WorkerCounts
    var after = WorkerCounts(head: 0, refused: 0)
    var attempts = 0
    var strangerMessages = 0
    var refusalsSeen = 0
    var writerAccepted = 0
    var watcherMessages = 0
}

/// What the revocation test saw.
struct RevocationOutcome: Sendable {
    var revokedAnsweredBefore = false
    var keptFedBefore = false
    var revokedFedBefore = false
    var rebound = false
    var revokedAnsweredAfter = true
    var keptAnsweredAfter = false
    var lateAnswered = false
    var keptFedAfter = false
    var revokedFedAfter = true
    var lastPosition: Int64 = 0
}
