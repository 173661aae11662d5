import Glibc
import LogbookClient
import LogbookJSON
import LogbookZMQ
import Testing

/// The client given several commands endpoints (ARCHITECTURE §10): requests go only to
/// workers that are up, a timed-out request is resent with its id to another worker, with
/// every worker down a request waits for one (or its attempts run out), and `Status` can
/// ask each worker.
@Suite("LogbookClient with several workers")
struct SeveralWorkersTests {
    /// `{"id","ok":true,"worker":name}` for every request.
    static func answering(as name: String) -> ScriptedServer.Script {
        { request in [.reply(success(request, ["worker": .string(name)]))] }
    }

    /// An `ipc://` endpoint nobody has bound (nor will, unless the test does): unlike a
    /// released tcp port, no other test running alongside can take it.
    static func unboundEndpoint() -> String {
        "ipc:///tmp/logbook-client-test-\(UInt64.random(in: 0...UInt64.max)).sock"
    }

    /// Removes the file that binding an `ipc://` endpoint left behind.
    static func removeFile(of endpoint: String) {
        unlink(String(endpoint.dropFirst("ipc://".count)))
    }

    static func endpoints(_ commands: [String], other: String) throws -> ClientEndpoints {
        ClientEndpoints(commands: try EndpointList(commands), feed: other, queries: other, log: other)
    }

    /// A client of two workers that are both down (nothing listens at either endpoint yet),
    /// and the second one's endpoint.
    static func clientOfTwoDownWorkers(timeout: Duration, attempts: Int) throws -> (LogbookClient, String) {
        let (one, two) = (unboundEndpoint(), unboundEndpoint())
        let client = try LogbookClient(
            endpoints: try endpoints([one, two], other: one), timeout: timeout, attempts: attempts)
        return (client, two)
    }

    @Test func requestsGoOnlyToTheWorkerThatIsUpNeverToOneThatIsDown() async throws {
        let down = Self.unboundEndpoint()
        let live = try await ScriptedServer(Self.answering(as: "live"))
        // One attempt each, and a long one: a request queued towards the worker that is down
        // would fail the test with timedOut (libzmq would round-robin every second one there).
        let client = try LogbookClient(
            endpoints: try Self.endpoints([down, live.endpoint], other: live.endpoint), timeout: .seconds(20),
            attempts: 1)
        let ids = (1...6).map { "c\($0)" }
        try await withThrowingTaskGroup(of: JSONObject.self) { group in
            for id in ids { group.addTask { try await client.request(.commands, ["id": .string(id)]) } }
            for try await reply in group { #expect(reply["worker"] == "live") }
        }
        for id in ids { #expect(live.requests(id: id).count == 1, "\(id)") }
        client.close()
        await live.stop()
    }

    @Test func aRequestWhoseWorkerWentAwayIsResentWithItsIdToAnotherWorker() async throws {
        let first = try await ScriptedServer { _ in [] }
        let secondEndpoint = Self.unboundEndpoint()
        let client = try LogbookClient(
            endpoints: try Self.endpoints([secondEndpoint, first.endpoint], other: first.endpoint),
            timeout: .seconds(2), attempts: 5)
        // Only the first worker is up: the first attempt goes there, and is not answered.
        let waiting = Task { try await client.request(.commands, ["id": "moved", "type": "AddProduct"]) }
        try await first.waitUntilReceived("moved")
        #expect(first.requests(id: "moved").count == 1)
        // It goes away and the other comes up: the retry, on a fresh socket, lands there.
        await first.stop()
        let second = try await ScriptedServer(at: secondEndpoint, Self.answering(as: "second"))

        let reply = try await waiting.value
        #expect(reply["worker"] == "second")
        let resent = try #require(second.requests(id: "moved").first)
        #expect(resent.document == ["id": "moved", "type": "AddProduct"])
        client.close()
        await second.stop()
        Self.removeFile(of: secondEndpoint)
    }

    @Test func withEveryWorkerDownARequestWaitsUntilOneComesUpAndIsSentOnce() async throws {
        // Attempts long enough that a loaded machine answers the one real send inside one of
        // them: a resend would be the client's doing only if the first send had no answer.
        let (client, two) = try Self.clientOfTwoDownWorkers(timeout: .seconds(2), attempts: 10)
        let waiting = Task { try await client.request(.commands, ["id": "patient"]) }
        // Some attempts pass with nowhere to send (nothing to wait for but time here).
        try await Task.sleep(for: .milliseconds(500))
        let server = try await ScriptedServer(at: two, Self.answering(as: "two"))

        #expect(try await waiting.value["worker"] == "two")
        // Nothing was queued towards a worker that was down, so it arrived once.
        #expect(server.requests(id: "patient").count == 1)
        client.close()
        await server.stop()
        Self.removeFile(of: two)
    }

    @Test func withEveryWorkerDownARequestTimesOutAfterItsAttemptsAndTheClientGoesOn() async throws {
        let (client, _) = try Self.clientOfTwoDownWorkers(timeout: .milliseconds(100), attempts: 3)
        for id in ["first", "second"] {
            await #expect(throws: LogbookClientError.timedOut(.commands, attempts: 3)) {
                try await client.request(.commands, ["id": .string(id)])
            }
        }
        client.close()
    }

    @Test func statusOfEachWorkerAsksEveryListedWorkerAndReportsThemInOrder() async throws {
        let first = try await ScriptedServer { request in [.reply(success(request, ["result": ["role": "a"]]))] }
        let down = Self.unboundEndpoint()
        let last = try await ScriptedServer { request in [.reply(success(request, ["result": ["role": "b"]]))] }
        let client = try LogbookClient(
            endpoints: try Self.endpoints([first.endpoint, down, last.endpoint], other: down),
            timeout: .seconds(2), attempts: 1)

        let answers = await client.statusOfEachWorker()
        #expect(
            answers == [
                WorkerStatusAnswer(endpoint: first.endpoint, outcome: .success(["role": "a"])),
                WorkerStatusAnswer(endpoint: down, outcome: .failure(.timedOut(.commands, attempts: 1))),
                WorkerStatusAnswer(endpoint: last.endpoint, outcome: .success(["role": "b"])),
            ])
        #expect(first.requests.count == 1 && first.requests.first?.document?["type"] == "Status")
        #expect(last.requests.count == 1)
        client.close()
        await first.stop()
        await last.stop()
    }
}
