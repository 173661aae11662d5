import Foundation
import LogbookClient
import LogbookJSON
import Testing

/// `logbook send` and `logbook replay` (the real binary) against a running worker, and the
/// command line's own refusals. These were in-process tests on a data directory before the
/// bus; every behaviour that still applies is kept.
@Suite("End to end: logbook send and replay", .serialized)
struct SendReplayCLITests {
    /// A cluster with only a worker: `send` and `replay` need nothing else.
    static func worker() async throws -> ServiceCluster {
        let cluster = try ServiceCluster()
        try await cluster.startWorker()
        return cluster
    }

    @Test("send prints the wire reply and replay prints the log as JSON lines")
    func sendAndReplay() async throws {
        let logbook = try await Self.worker()
        let registered = try await logbook.run([
            "send", "RegisterUser", #"{"userId":"u1","name":"Ann","email":"ann@example.com"}"#, "--id", "c1",
        ])
        #expect(registered.status == 0, "\(registered.stderr)")
        let reply = try registered.json()
        #expect(reply.keys == ["id", "ok", "position", "events"])
        #expect(reply["id"] == "c1")
        #expect(reply["ok"] == true)
        #expect(reply["position"] == 2)
        let events = try #require(reply["events"]?.arrayValue)
        #expect(events.compactMap { $0.objectValue?["type"] } == ["UserRegistered", "EmailClaimed"])
        let envelope = try #require(events.first?.objectValue)
        #expect(
            envelope.keys == ["eventId", "position", "stream", "version", "type", "data", "metadata", "recordedAt"])
        #expect(envelope["metadata"] == ["commandId": "c1", "correlationId": "c1", "causationId": "c1"])

        let product = try await logbook.run(
            ["send", "AddProduct", "-", "--correlation-id", "flow-7", "--causation-id", "c1"],
            stdin: #"{"productId":"p1","name":"Tea","price":"2.5","category":"food","stock":3}"#)
        #expect(product.status == 0, "\(product.stderr)")
        let productEvent = try #require(try product.json()["events"]?.arrayValue?.first)
        #expect(productEvent["metadata"]?["correlationId"] == "flow-7")
        #expect(productEvent["metadata"]?["causationId"] == "c1")

        let replay = try await logbook.run(["replay"])
        #expect(replay.status == 0)
        let lines = try replay.jsonLines()
        #expect(lines.compactMap { $0["position"] } == [1, 2, 3])
        #expect(lines.last?["data"]?.objectValue?["price"] == "2.50")
        // replay prints exactly the envelopes the replies carried.
        #expect(lines.map { JSONValue.object($0) } == events + [productEvent])
        #expect(
            try await logbook.run(["replay", "--from", "2", "--limit", "1"]).jsonLines().compactMap { $0["position"] }
                == [2])
        #expect(
            try await logbook.run(["replay", "--topics", "products"]).jsonLines().compactMap { $0["stream"] } == [
                "product-p1"
            ])
    }

    @Test("a retried command id prints the first reply and appends nothing")
    func retry() async throws {
        let logbook = try await Self.worker()
        let body = #"{"productId":"p1","name":"Tea","price":"1.00","category":"food","stock":1}"#
        let first = try await logbook.run(["send", "AddProduct", body, "--id", "same"])
        let second = try await logbook.run(["send", "AddProduct", body, "--id", "same"])
        #expect(first.status == 0)
        #expect(second.status == 0)
        #expect(second.stdout == first.stdout)
        // Even with other data: the id decides, and the first outcome comes back.
        let changed = try await logbook.run([
            "send", "AddProduct", #"{"productId":"p2","name":"Mug","price":"3","category":"food","stock":1}"#, "--id",
            "same",
        ])
        #expect(changed.stdout == first.stdout)
        #expect(try await logbook.run(["replay"]).jsonLines().count == 1)
    }

    @Test("a retried refusal gets the first refusal back, even after the state changed")
    func retriedRefusal() async throws {
        let logbook = try await Self.worker()
        let user = #"{"userId":"u1","name":"Ann","email":"a@b.co"}"#
        let product = #"{"productId":"p1","name":"Tea","price":"1.00","category":"food","stock":1}"#
        #expect(try await logbook.run(["send", "RegisterUser", user]).status == 0)
        #expect(try await logbook.run(["send", "AddProduct", product]).status == 0)
        let purchase = #"{"orderId":"o1","userId":"u1","productId":"p1","quantity":3}"#
        let first = try await logbook.run(["send", "PurchaseProduct", purchase, "--id", "buy-1"])
        #expect(first.status == 1)
        #expect(try first.json()["error"]?["code"] == "insufficient_stock")
        #expect(try first.json()["error"]?["details"] == ["productId": "p1", "requested": 3, "available": 1])
        #expect(try await logbook.run(["send", "RestockProduct", #"{"productId":"p1","quantity":5}"#]).status == 0)
        let again = try await logbook.run(["send", "PurchaseProduct", purchase, "--id", "buy-1"])
        #expect(again.status == 1)
        #expect(again.stdout == first.stdout)
        let fresh = try await logbook.run(["send", "PurchaseProduct", purchase, "--id", "buy-2"])
        #expect(fresh.status == 0, "\(fresh.stdout)")
        #expect(try await logbook.run(["replay", "--topics", "orders"]).jsonLines().count == 1)
    }

    @Test(
        "error replies carry the code and exit 1, and nothing is appended",
        arguments: [
            ("Teleport", "{}", "unknown_type"),
            ("RegisterUser", #"{"userId":"u1","name":"","email":"a@b.co"}"#, "invalid_input"),
            ("RestockProduct", #"{"productId":"nope","quantity":1}"#, "not_found"),
            ("AddProduct", "[]", "invalid_input"),
        ])
    func errorReplies(type: String, data: String, code: String) async throws {
        let logbook = try await Self.worker()
        let result = try await logbook.run(["send", type, data, "--id", "x1"])
        #expect(result.status == 1)
        let reply = try result.json()
        #expect(reply["ok"] == false)
        #expect(reply["id"] == "x1")
        let error = try #require(reply["error"]?.objectValue)
        #expect(error["code"] == .string(code))
        #expect(error["message"]?.stringValue?.isEmpty == false)
        #expect(try await logbook.run(["replay"]).stdout.isEmpty)
    }

    @Test("DATA that is not JSON is refused by the command line itself: exit 2, nothing sent")
    func dataNotJSON() async throws {
        let logbook = try await Self.worker()
        for data in ["{bad json", "", "{\"a\":1} trailing"] {
            let result = try await logbook.run(["send", "RegisterUser", data, "--id", "x1"])
            #expect(result.status == 2, "\(data)")
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.hasPrefix("logbook: error: send: DATA is not valid JSON"), "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1)
        }
        let client = try logbook.client()
        defer { client.close() }
        #expect(
            try await client.status(of: .commands)["commands"] == [
                "accepted": 0, "rejected": 0, "retries": 0, "decidedAgain": 0,
            ])
        #expect(try await logbook.run(["replay"]).stdout.isEmpty)
    }

    @Test("a wrong expected version is refused with its details")
    func expectedVersion() async throws {
        let logbook = try await Self.worker()
        let body = #"{"productId":"p1","name":"Tea","price":"1.00","category":"food","stock":1}"#
        #expect(try await logbook.run(["send", "AddProduct", body, "--expected-version", "noStream"]).status == 0)
        let stale = try await logbook.run([
            "send", "RestockProduct", #"{"productId":"p1","quantity":1}"#, "--expected-version", "5",
        ])
        #expect(stale.status == 1)
        let error = try #require(try stale.json()["error"]?.objectValue)
        #expect(error["code"] == "wrong_expected_version")
        #expect(
            error["details"] == ["stream": "product-p1", "expected": "5", "actual": 1, "cause": "expectedVersion"])
        let bad = try await logbook.run([
            "send", "RestockProduct", #"{"productId":"p1","quantity":1}"#, "--expected-version", "soon",
        ])
        #expect(bad.status == 1)
        #expect(try bad.json()["error"]?.objectValue?["code"] == "invalid_input")
        #expect(try bad.json()["error"]?["details"] == ["field": "expectedVersion"])
        let right = try await logbook.run([
            "send", "RestockProduct", #"{"productId":"p1","quantity":1}"#, "--expected-version", "1",
        ])
        #expect(right.status == 0, "\(right.stdout)")
        #expect(try await logbook.run(["replay"]).jsonLines().count == 2)
    }

    @Test("bad command lines say what is wrong on one line and exit 2")
    func usageErrors() async throws {
        for arguments in [
            ["frobnicate"], ["send"], ["send", "A", "{}", "--bogus", "1"], ["replay", "--from", "0"],
            ["replay", "--topics", "nope"], ["replay", "--limit"], ["replay", "extra"],
            ["send", "A", "{}", "--attempts", "0"],
            ["query"], ["subscribe", "toys"], ["subscribe", "--from", "0"], ["run"], ["run", "cook"], ["up", "now"],
            ["status", "x"], ["rebuild", "x"], ["verify", "x"], ["send", "A", "{}", "--log-level", "loud"],
            ["send", "A", "{}", "--commands", "tcp://127.0.0.1:1,,tcp://127.0.0.1:2"],
            ["up", "--commands", "tcp://127.0.0.1:1,tcp://127.0.0.1:2"],
        ] {
            let result = try await runLogbook(arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stderr.hasPrefix("logbook: error: "), "\(arguments): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
        }
        #expect(try await runLogbook(["send", "--help"]).stdout.contains("--expected-version"))
        #expect(try await runLogbook(["help"]).status == 0)
    }

    @Test("a data directory holding something that is not an event log is refused by run worker and verify")
    func foreignFile() async throws {
        let cluster = try ServiceCluster()
        let dataDirectory = cluster.directory.appendingPathComponent("foreign")
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        let file = dataDirectory.appendingPathComponent("events.sqlite3")
        let text = Data("this is not a database, just text that is long enough to look like a header".utf8)
        try text.write(to: file)
        let worker = try await cluster.run(["run", "worker", "--data-dir", dataDirectory.path])
        #expect(worker.status == 3)
        #expect(worker.stderr.contains("not a Logbook event log"), "\(worker.stderr)")
        #expect(worker.stderr.split(separator: "\n").count == 1, "\(worker.stderr)")
        #expect(!isListening(cluster.commands))
        let verify = try await runLogbook(["verify", "--data-dir", dataDirectory.path])
        #expect(verify.status == 3)
        #expect(verify.stdout.isEmpty)
        #expect(verify.stderr.contains("not a Logbook event log"), "\(verify.stderr)")
        // Nothing was written to it.
        #expect(try Data(contentsOf: file) == text)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dataDirectory.path) == ["events.sqlite3"])
    }

    @Test("verify of a data directory with no log says so")
    func missingLog() async throws {
        let cluster = try ServiceCluster()
        let result = try await runLogbook([
            "verify", "--data-dir", cluster.directory.appendingPathComponent("none").path,
        ])
        #expect(result.status == 3)
        #expect(result.stderr.contains("no event log"), "\(result.stderr)")
    }
}
