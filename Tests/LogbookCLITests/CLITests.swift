import Foundation
import LogbookJSON
import Testing

/// The real `logbook` binary against a real SQLite file.
@Suite("logbook command line")
struct CLITests {
    @Test("send prints the wire reply and replay prints the log as JSON lines")
    func sendAndReplay() throws {
        let logbook = try LogbookProcess()
        defer { logbook.removeData() }
        let registered = try logbook.run([
            "send", "RegisterUser", #"{"userId":"u1","name":"Ann","email":"ann@example.com"}"#, "--id", "c1",
        ])
        #expect(registered.status == 0, "\(registered.stderr)")
        let reply = try registered.json()
        #expect(reply["id"] == "c1")
        #expect(reply["ok"] == true)
        #expect(reply["position"] == 2)
        let events = try #require(reply["events"]?.arrayValue)
        #expect(events.compactMap { $0.objectValue?["type"] } == ["UserRegistered", "EmailClaimed"])
        let envelope = try #require(events.first?.objectValue)
        #expect(
            envelope.keys == ["eventId", "position", "stream", "version", "type", "data", "metadata", "recordedAt"])
        #expect(envelope["metadata"] == ["commandId": "c1", "correlationId": "c1", "causationId": "c1"])

        let product = try logbook.run(
            ["send", "AddProduct", "-"],
            stdin: #"{"productId":"p1","name":"Tea","price":"2.5","category":"food","stock":3}"#)
        #expect(product.status == 0, "\(product.stderr)")

        let replay = try logbook.run(["replay"])
        #expect(replay.status == 0)
        let lines = try replay.jsonLines()
        #expect(lines.compactMap { $0["position"] } == [1, 2, 3])
        #expect(lines.last?["data"]?.objectValue?["price"] == "2.50")
        #expect(
            try logbook.run(["replay", "--from", "2", "--limit", "1"]).jsonLines().compactMap { $0["position"] } == [2])
        #expect(
            try logbook.run(["replay", "--topics", "products"]).jsonLines().compactMap { $0["stream"] } == [
                "product-p1"
            ])
    }

    @Test("a retried command id prints the first reply and appends nothing")
    func retry() throws {
        let logbook = try LogbookProcess()
        defer { logbook.removeData() }
        let body = #"{"productId":"p1","name":"Tea","price":"1.00","category":"food","stock":1}"#
        let first = try logbook.run(["send", "AddProduct", body, "--id", "same"])
        let second = try logbook.run(["send", "AddProduct", body, "--id", "same"])
        #expect(first.status == 0)
        #expect(second.stdout == first.stdout)
        #expect(try logbook.run(["replay"]).jsonLines().count == 1)
    }

    @Test(
        "error replies carry the code and exit 1, and nothing is appended",
        arguments: [
            ("RegisterUser", "{bad json", "malformed_request"),
            ("Teleport", "{}", "unknown_type"),
            ("RegisterUser", #"{"userId":"u1","name":"","email":"a@b.co"}"#, "invalid_input"),
            ("RestockProduct", #"{"productId":"nope","quantity":1}"#, "not_found"),
        ])
    func errorReplies(type: String, data: String, code: String) throws {
        let logbook = try LogbookProcess()
        defer { logbook.removeData() }
        let result = try logbook.run(["send", type, data, "--id", "x1"])
        #expect(result.status == 1)
        let reply = try result.json()
        #expect(reply["ok"] == false)
        #expect(reply["id"] == "x1")
        let error = try #require(reply["error"]?.objectValue)
        #expect(error["code"] == .string(code))
        #expect(error["message"]?.stringValue?.isEmpty == false)
        #expect(try logbook.run(["replay"]).stdout.isEmpty)
    }

    @Test("a wrong expected version is refused with its details")
    func expectedVersion() throws {
        let logbook = try LogbookProcess()
        defer { logbook.removeData() }
        let body = #"{"productId":"p1","name":"Tea","price":"1.00","category":"food","stock":1}"#
        #expect(try logbook.run(["send", "AddProduct", body, "--expected-version", "noStream"]).status == 0)
        let stale = try logbook.run([
            "send", "RestockProduct", #"{"productId":"p1","quantity":1}"#, "--expected-version", "5",
        ])
        #expect(stale.status == 1)
        #expect(try stale.json()["error"]?.objectValue?["code"] == "wrong_expected_version")
        let bad = try logbook.run([
            "send", "RestockProduct", #"{"productId":"p1","quantity":1}"#, "--expected-version", "soon",
        ])
        #expect(try bad.json()["error"]?.objectValue?["code"] == "invalid_input")
    }

    @Test("bad command lines say what is wrong on one line and exit 2")
    func usageErrors() throws {
        let logbook = try LogbookProcess()
        defer { logbook.removeData() }
        for arguments in [
            ["frobnicate"], ["send"], ["send", "A", "{}", "--bogus", "1"], ["replay", "--from", "0"],
            ["replay", "--topics", "nope"], ["replay", "--limit"],
        ] {
            let result = try logbook.run(arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stderr.hasPrefix("logbook: error: "), "\(arguments): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
        }
        #expect(try logbook.run(["send", "--help"]).stdout.contains("--expected-version"))
        #expect(try logbook.run(["help"]).status == 0)
    }

    @Test("a data directory holding something that is not an event log is refused cleanly")
    func foreignFile() throws {
        let logbook = try LogbookProcess()
        defer { logbook.removeData() }
        try FileManager.default.createDirectory(at: logbook.dataDirectory, withIntermediateDirectories: true)
        try Data("this is not a database, just text that is long enough to look like a header".utf8)
            .write(to: logbook.dataDirectory.appendingPathComponent("events.sqlite3"))
        let replay = try logbook.run(["replay"])
        #expect(replay.status == 3)
        #expect(replay.stderr.contains("not a Logbook event log"), "\(replay.stderr)")
        let send = try logbook.run(["send", "DeleteUser", #"{"userId":"u1"}"#])
        #expect(send.status == 3)
        #expect(send.stdout.isEmpty)
        #expect(send.stderr.contains("not a Logbook event log"), "\(send.stderr)")
    }

    @Test("replay of a data directory with no log says so")
    func missingLog() throws {
        let logbook = try LogbookProcess()
        defer { logbook.removeData() }
        let result = try logbook.run(["replay"])
        #expect(result.status == 3)
        #expect(result.stderr.contains("no event log"))
    }
}

@Suite("logbook verify")
struct VerifyCLITests {
    @Test("verify passes a log the service wrote, and reports one changed behind its back")
    func verify() throws {
        let logbook = try LogbookProcess()
        defer { logbook.removeData() }
        let product = #"{"productId":"p1","name":"Tea","price":"1.00","category":"food","stock":3}"#
        #expect(
            try logbook.run(["send", "RegisterUser", #"{"userId":"u1","name":"Ann","email":"a@b.co"}"#]).status == 0)
        #expect(try logbook.run(["send", "AddProduct", product]).status == 0)
        #expect(
            try logbook.run([
                "send", "PurchaseProduct", #"{"orderId":"o1","userId":"u1","productId":"p1","quantity":2}"#,
            ])
            .status == 0)
        let good = try logbook.run(["verify"])
        #expect(good.status == 0, "\(good.stdout) \(good.stderr)")
        #expect(try good.json() == ["ok": true, "events": 5])

        // Someone drops the append-only trigger and edits the purchase with the sqlite3 tool.
        let database = logbook.dataDirectory.appendingPathComponent("events.sqlite3").path
        let sql = """
            DROP TRIGGER events_refuse_update;
            UPDATE events SET data = json_set(data, '$.stock', 2) WHERE type = 'ProductPurchased';
            """
        let edit = Process()
        edit.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        edit.arguments = [database, sql]
        try edit.run()
        edit.waitUntilExit()
        #expect(edit.terminationStatus == 0)

        let bad = try logbook.run(["verify"])
        #expect(bad.status == 1)
        let report = try bad.json()
        #expect(report["ok"] == false)
        #expect(report["violations"] == [["position": 4, "problem": "p1 sold 2 from 3, leaving 2"]])
    }
}
