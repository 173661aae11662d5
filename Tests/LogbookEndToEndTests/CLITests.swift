import Foundation
import Glibc
import LogbookApplication
import LogbookClient
import LogbookJSON
import LogbookTestSupport
import LogbookZMQ
import Testing

/// The `logbook` command line around the bus: `up`, `status`, `rebuild`, `--help` for every
/// command, and client commands with no server to talk to.
@Suite("End to end: the command line around the bus", .serialized)
struct CLITests {
    @Test("logbook up starts a worker, a query and a groups process; SIGTERM stops them and up exits 0")
    func up() async throws {
        let cluster = try ServiceCluster()  // free ports and a folder; nothing started
        let dataDirectory = cluster.directory.appendingPathComponent("up").path
        let up = try cluster.background(["up", "--data-dir", dataDirectory])
        let client = try cluster.client(timeout: .milliseconds(300), attempts: 1)
        defer { client.close() }
        let answering = await bothAnswer(cluster)
        try #require(answering, "up's processes did not answer: \(up.stderr)")
        let children = childProcesses(of: up.pid)
        #expect(children.count == 3, "up runs three children, found \(children)")

        // They work together: a command is applied by the query process.
        let sent = try await cluster.client().send(type: "AddProduct", data: Fixture.product("tea"))
        let answer = try await cluster.patientClient().query(
            type: "GetProduct", data: ["productId": "tea"], minPosition: sent.position,
            timeoutMs: patientQueryMilliseconds)
        #expect(answer.result["productId"] == "tea")
        #expect(FileManager.default.fileExists(atPath: dataDirectory + "/events.sqlite3"))
        // The groups process follows the worker: a group created now sees the log's head.
        let created = try await cluster.run(["groups", "create", "mail", "--topics", "products", "--from", "head"])
        #expect(created.status == 0, "\(created.stdout) \(created.stderr)")
        #expect(try created.json()["result"]?.objectValue?["checkpoint"]?.intValue == Int(sent.position))
        #expect(FileManager.default.fileExists(atPath: dataDirectory + "/groups.sqlite3"))

        #expect(await up.signal(SIGTERM) == 0, "\(up.stderr)")
        for pid in children { #expect(!processExists(pid), "child \(pid) outlived up") }
        for endpoint in [cluster.commands, cluster.feed, cluster.queries, cluster.log, cluster.groups] {
            #expect(!isListening(endpoint), "\(endpoint) is still open")
        }
        #expect(!up.stderr.contains("level=error"), "\(up.stderr)")
    }

    @Test("logbook up stops the other child and fails when one child dies")
    func upChildDies() async throws {
        let cluster = try ServiceCluster()
        let up = try cluster.background(["up", "--data-dir", cluster.directory.appendingPathComponent("up").path])
        let client = try cluster.client(timeout: .milliseconds(300), attempts: 1)
        defer { client.close() }
        let answering = await bothAnswer(cluster)
        try #require(answering, "\(up.stderr)")
        let children = childProcesses(of: up.pid)
        try #require(children.count == 3)
        // The worker is the child that listens on the commands port; kill whichever child
        // comes first and expect the other to be stopped.
        kill(children[0], SIGKILL)
        #expect(await up.waitForExit(within: patience) == 3, "\(up.stderr)")
        #expect(up.stderr.contains("ended (signal 9); stopping the rest"), "\(up.stderr)")
        for pid in children { #expect(!processExists(pid)) }
        for endpoint in [cluster.commands, cluster.queries] { #expect(!isListening(endpoint)) }
    }

    @Test("logbook status prints the worker's and the query process's status")
    func status() async throws {
        let cluster = try await ServiceCluster.started()
        let client = try cluster.client()
        defer { client.close() }
        _ = try await client.send(type: "RegisterUser", data: Fixture.user("ann"))
        let last = try await client.send(type: "AddProduct", data: Fixture.product("tea"))
        do {
            _ = try await client.send(type: "AddProduct", data: Fixture.product("tea"))
        } catch {
            #expect(error.rejectionCode == "already_exists")
        }
        try await cluster.queryStatus(after: last.position)

        let result = try await cluster.run(["status"])
        #expect(result.status == 0, "\(result.stderr)")
        let report = try result.json()
        #expect(report.keys == ["worker", "query"])
        let worker = try #require(report["worker"]?.objectValue)
        #expect(worker["role"] == "worker")
        #expect(worker["head"] == .int(Int(last.position)))
        #expect(worker["commands"] == ["accepted": 2, "rejected": 1, "retries": 0, "decidedAgain": 0])
        #expect(worker["published"] == 2)  // the email claim is not published
        let query = try #require(report["query"]?.objectValue)
        #expect(query["role"] == "query")
        #expect(query["checkpoint"] == .int(Int(last.position)))
        #expect(query["lag"] == 0)
        #expect(query["readModels"] == ["users": 1, "posts": 0, "products": 1, "orders": 0])
        #expect(query["rebuild"] == ["state": "idle"])

        // With the query process down, its part says so and the exit status is 1.
        cluster.stopQuery()
        let partial = try await cluster.run(["status", "--timeout-ms", "200", "--attempts", "1"])
        #expect(partial.status == 1)
        let degraded = try partial.json()
        #expect(degraded["worker"]?["role"] == "worker")
        #expect(degraded["query"]?["unreachable"]?.stringValue?.isEmpty == false)
    }

    @Test("logbook rebuild switches to a new generation that answers exactly as the old one")
    func rebuild() async throws {
        let cluster = try await ServiceCluster.started()
        let client = try cluster.client()
        defer { client.close() }
        try await FeedTests.sendMixedTraffic(client, round: 1, count: 8)
        _ = try await client.send(type: "DeleteUser", data: ["userId": "u1-2"])
        _ = try await client.send(type: "RemoveProduct", data: ["productId": "p1-3"])
        let head = try await cluster.head()
        let before = try await cluster.queryStatus(after: head)
        let oldGeneration = try #require(before["generation"]?.intValue)
        let answers = try await ReadModelSnapshot.read(of: cluster, after: head)

        let result = try await cluster.run(["rebuild"])
        #expect(result.status == 0, "\(result.stderr)")
        let reply = try result.json()
        #expect(reply.keys == ["ok", "generation", "position", "seconds"])
        #expect(reply["ok"] == true)
        #expect(reply["generation"] == .int(oldGeneration + 1))
        #expect(reply["position"] == .int(Int(head)))

        let after = try await client.status(of: .queries)
        #expect(after["generation"] == .int(oldGeneration + 1))
        #expect(after["rebuild"] == ["state": "idle"])
        #expect(after["readModels"] == before["readModels"])
        #expect(try await ReadModelSnapshot.read(of: cluster, after: head) == answers)

        // The new generation keeps following the feed.
        let later = try await client.send(type: "AddProduct", data: Fixture.product("after-rebuild"))
        let answer = try await cluster.patientClient().query(
            type: "GetProduct", data: ["productId": "after-rebuild"], minPosition: later.position,
            timeoutMs: patientQueryMilliseconds)
        #expect(answer.result["productId"] == "after-rebuild")
        let again = try await cluster.run(["rebuild"])
        #expect(try again.json()["generation"] == .int(oldGeneration + 2))
        #expect(cluster.errorLines(of: "query").isEmpty, "\(cluster.stderr(of: "query"))")
    }

    @Test("two Rebuild requests read in one turn start one rebuild, and queries keep answering")
    func rebuildRequestedTwiceAtOnce() async throws {
        let cluster = try await ServiceCluster.started()
        let client = try cluster.client()
        defer { client.close() }
        try await FeedTests.sendMixedTraffic(client, round: 1, count: 4)
        let head = try await cluster.head()
        let before = try await cluster.queryStatus(after: head)
        let oldGeneration = try #require(before["generation"]?.intValue)

        let endpoint = cluster.queries
        let replies = try await offThePool { () throws -> [RawReply] in
            let context = try ZMQContext()
            let connection = try RawConnection(context, .dealer, to: endpoint)
            try connection.send([[], bytes(#"{"id":"r1","type":"Rebuild"}"#)])
            try connection.send([[], bytes(#"{"id":"r2","type":"Rebuild"}"#)])
            try connection.send([[], bytes(#"{"id":"s1","type":"Status"}"#)])
            return try (0..<3).map { _ in RawReply(frames: try connection.receive(), overREQ: false) }
        }
        for (id, raw) in zip(["r1", "r2"], replies) {
            let reply = raw.document("Rebuild \(id)")
            #expect(reply?["ok"] == true && reply?["id"] == .string(id))
        }
        // A Status read in the same turn as the Rebuild already sees it (running, or done).
        let statusAfter = try #require(replies[2].document("Status s1")?["result"])
        #expect(
            statusAfter["rebuild"]?["state"] != "idle" || statusAfter["generation"] == .int(oldGeneration + 1),
            "\(statusAfter)")
        let settled = try await eventually(within: patience) {
            try await client.status(of: .queries)["rebuild"] == ["state": "idle"]
        }
        #expect(settled, "the rebuild finished")
        let after = try await client.status(of: .queries)
        #expect(after["generation"] == .int(oldGeneration + 1), "one rebuild, not two")
        // A client's retry of a finished Rebuild (the same id again) starts nothing.
        let retried = try await client.request(.queries, ["id": "r1", "type": "Rebuild"])
        #expect(retried["ok"] == true)
        #expect(retried["result"]?["rebuild"] == ["state": "idle"])
        #expect(retried["result"]?["generation"] == .int(oldGeneration + 1))
        let answer = try await cluster.patientClient().query(
            type: "ListUsers", minPosition: head, timeoutMs: patientQueryMilliseconds)
        #expect(answer.result["total"] == before["readModels"]?["users"])
        #expect(cluster.errorLines(of: "query").isEmpty, "\(cluster.stderr(of: "query"))")
    }

    @Test("a rebuild while commands keep coming loses and repeats nothing, and survives a restart")
    func rebuildUnderLoad() async throws {
        let cluster = try await ServiceCluster.started()
        let client = try cluster.client()
        defer { client.close() }
        try await FeedTests.sendMixedTraffic(client, round: 1, count: 10)
        let writer = Task {
            for index in 0..<60 {
                _ = try await client.send(type: "AddProduct", data: Fixture.product("during\(index)"))
                _ = try await client.send(type: "RestockProduct", data: ["productId": "p1-1", "quantity": 1])
            }
        }
        let rebuild = try await cluster.run(["rebuild"])
        try await writer.value
        #expect(rebuild.status == 0, "\(rebuild.stdout) \(rebuild.stderr)")
        #expect(try rebuild.json()["generation"] == 2)

        let log = try await cluster.wholeLog()
        let head = try #require(log.last?.position)
        let status = try await cluster.queryStatus(after: head)
        #expect(status["generation"] == 2)
        #expect(status["checkpoint"] == .int(Int(head)))
        #expect(status["readModels"] == expectedCounts(log))
        #expect(
            try await client.query(type: "GetProduct", data: ["productId": "p1-1"]).result["stock"] == .int(5 + 2 + 60))
        let afterLoad = try await ReadModelSnapshot.read(of: cluster, after: head)
        #expect(afterLoad.products.count == 10 + 60)

        // Killed and restarted, the query process opens the rebuilt generation, and only it.
        cluster.stopQuery(SIGKILL)
        try await cluster.startQuery()
        let restarted = try await cluster.queryStatus(after: head)
        #expect(restarted["generation"] == 2)
        #expect(restarted["eventsApplied"] == 0)
        #expect(try await ReadModelSnapshot.read(of: cluster, after: head) == afterLoad)
        let files = try FileManager.default.contentsOfDirectory(atPath: cluster.queryDataDirectory)
        #expect(files.filter { $0.hasSuffix(".sqlite3") } == ["readmodels-2.sqlite3"])

        // And a second rebuild, with nothing moving, answers the same.
        let second = try await cluster.run(["rebuild"])
        #expect(try second.json()["generation"] == 3, "\(second.stdout) \(second.stderr)")
        #expect(try await ReadModelSnapshot.read(of: cluster, after: head) == afterLoad)
    }

    @Test("logbook up with a port already taken exits 3 and leaves no child behind")
    func upPortTaken() async throws {
        let cluster = try ServiceCluster()
        // Something else listens on the commands port.
        let blocker = try cluster.background([
            "run", "worker", "--data-dir", cluster.directory.appendingPathComponent("other").path,
        ])
        let blocking = await answersStatus(cluster, .commands)
        try #require(blocking)
        let up = try cluster.background(["up", "--data-dir", cluster.directory.appendingPathComponent("up").path])
        #expect(await up.waitForExit(within: patience) == 3, "\(up.stderr)")
        #expect(up.stderr.contains("Address already in use"), "\(up.stderr)")
        #expect(up.stderr.contains("up: the worker process ended (exit status 3); stopping the rest"), "\(up.stderr)")
        #expect(childProcesses(of: up.pid).isEmpty)
        #expect(!isListening(cluster.queries), "the query child outlived up")
        #expect(await blocker.signal(SIGTERM) == 0)
    }

    @Test(
        "--help prints the command's own usage and exits 0",
        arguments: [
            "send", "query", "subscribe", "replay", "rebuild", "status", "run", "up", "verify", "version", "help",
        ])
    func help(command: String) async throws {
        let result = try await runLogbook([command, "--help"])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        #expect(result.stdout.hasPrefix("usage: logbook \(command)"), "\(command) --help printed: \(result.stdout)")
        let viaHelp = try await runLogbook(["help", command])
        #expect(viaHelp.status == 0)
        #expect(viaHelp.stdout == result.stdout)
        let overview = try await runLogbook(["help"])
        #expect(overview.stdout.contains("\n  \(command) "), "the overview does not list \(command)")
    }

    @Test(
        "a client command with no server to answer exits 3 with one line on stderr",
        arguments: [
            ["send", "AddProduct", #"{"productId":"p1","name":"Tea","price":"1","category":"food","stock":1}"#],
            ["query", "ListUsers"],
            ["rebuild"],
            ["replay"],
            ["subscribe", "--from", "1"],
        ])
    func nothingListens(arguments: [String]) async throws {
        let cluster = try ServiceCluster()  // ports nobody listens on
        let result = try await cluster.run(arguments + ["--timeout-ms", "200", "--attempts", "1"])
        #expect(result.status == 3, "\(arguments): \(result.stderr)")
        #expect(result.stdout.isEmpty)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(result.stderr)")
        #expect(lines.first?.hasPrefix("logbook: error: \(arguments[0]): ") == true, "\(result.stderr)")
    }
}
