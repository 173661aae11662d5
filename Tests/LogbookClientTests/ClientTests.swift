import LogbookApplication
import LogbookClient
import LogbookJSON
import LogbookWire
import LogbookZMQ
import Testing

/// The client against a scripted ROUTER on tcp loopback: what goes on the wire, how
/// replies find their requests, retries, timeouts, cancellation and closing.
@Suite("LogbookClient against a scripted server")
struct ClientTests {
    @Test func requestReturnsTheReplyDocumentExactlyAsTheServerSentIt() async throws {
        let answer: JSONObject = [
            "id": "q-1", "ok": false, "error": ["code": "not_found", "message": "no user u1"],
            "extra": [1, .double(2.5), nil, "text"],
        ]
        let server = try await ScriptedServer { _ in [.reply(.object(answer))] }
        let client = try LogbookClient(endpoints: server.endpoints, timeout: .seconds(3))
        let document: JSONObject = ["id": "q-1", "type": "GetUser", "data": ["userId": "u1"]]

        #expect(try await client.request(.queries, document) == answer)
        let received = try #require(server.requests.first)
        #expect(server.requests.count == 1)
        #expect(received.frames.count == 2 && received.frames[0].isEmpty)
        #expect(received.document == document)
        client.close()
        await server.stop()
    }

    @Test func typedCallsWriteTheWireDocumentsAndReadTheirReplies() async throws {
        let events = [
            event(position: 11, stream: "product-p1", type: "ProductAdded", data: #"{"productId":"p1","stock":3}"#),
            event(position: 12, stream: "order-o1", type: "OrderPlaced", data: #"{"orderId":"o1"}"#),
        ]
        let envelopes = JSONValue.array(try events.map { try WireEncoding.envelope($0) })
        let server = try await ScriptedServer { request in
            switch request.document?["type"]?.stringValue {
            case "AddProduct": [.reply(success(request, ["position": 12, "events": envelopes]))]
            case "ListProducts": [.reply(success(request, ["position": 12, "result": ["items": [], "total": 0]]))]
            case "ReadLog": [.reply(success(request, ["events": envelopes, "next": 13, "head": 12]))]
            case "Status": [.reply(success(request, ["result": ["role": "scripted"]]))]
            default: []
            }
        }
        let client = try LogbookClient(endpoints: server.endpoints, timeout: .seconds(3))

        let receipt = try await client.send(
            type: "AddProduct", data: ["productId": "p1"], expectedVersion: .noStream, correlationId: "corr-1")
        #expect(receipt == CommandReceipt(position: 12, events: events))
        _ = try await client.send(type: "AddProduct", data: [:], commandId: "c-2", expectedVersion: .exactly(3))
        _ = try await client.send(type: "AddProduct", data: [:], commandId: "c-3", causationId: "cause-3")
        let answer = try await client.query(
            type: "ListProducts", data: ["category": "food"], minPosition: 12, timeoutMs: 500)
        #expect(answer == QueryAnswer(position: 12, result: ["items": [], "total": 0]))
        #expect(
            try await client.readLog(from: 11, limit: 2, topics: ["products", "orders"])
                == LogPage(events: events, next: 13, head: 12))
        #expect(try await client.status(of: .queries) == ["role": "scripted"])

        let documents = server.requests.compactMap(\.document)
        try #require(documents.count == 6)
        let firstId = try #require(documents[0]["id"]?.stringValue)
        #expect(firstId.count == 36 && firstId == firstId.lowercased())
        #expect(
            documents[0] == [
                "id": .string(firstId), "type": "AddProduct", "data": ["productId": "p1"],
                "expectedVersion": "noStream", "metadata": ["correlationId": "corr-1"],
            ])
        #expect(documents[1] == ["id": "c-2", "type": "AddProduct", "data": [:], "expectedVersion": 3])
        #expect(
            documents[2] == ["id": "c-3", "type": "AddProduct", "data": [:], "metadata": ["causationId": "cause-3"]])
        #expect(documents[3]["type"] == "ListProducts" && documents[3]["data"] == ["category": "food"])
        #expect(documents[3]["minPosition"] == 12 && documents[3]["timeoutMs"] == 500)
        #expect(documents[4]["type"] == "ReadLog" && documents[4]["from"] == 11 && documents[4]["limit"] == 2)
        #expect(documents[4]["topics"] == ["products", "orders"])
        #expect(documents[5].keys.sorted() == ["id", "type"] && documents[5]["type"] == "Status")
        // Every request had an id of its own.
        #expect(Set(documents.compactMap { $0["id"]?.stringValue }).count == 6)
        client.close()
        await server.stop()
    }

    @Test func failureReplyBecomesATypedRejectionWithItsCode() async throws {
        let server = try await ScriptedServer { request in
            switch request.id {
            case "buy":
                [
                    .reply([
                        "id": "buy", "ok": false,
                        "error": ["code": "insufficient_stock", "message": "only 2 left", "details": ["available": 2]],
                    ])
                ]
            case "hollow": [.reply(["id": "hollow", "ok": true])]
            default: []
            }
        }
        let client = try LogbookClient(endpoints: server.endpoints, timeout: .seconds(3))

        let expected = ServiceErrorReply(code: "insufficient_stock", message: "only 2 left", details: ["available": 2])
        await #expect(throws: LogbookClientError.rejected(expected)) {
            try await client.send(type: "PurchaseProduct", data: ["quantity": 3], commandId: "buy")
        }
        #expect(expected.errorCode == .insufficientStock)
        // An `ok: true` reply without the promised fields is a malformed reply, not a crash.
        let hollow = await #expect(throws: LogbookClientError.self) {
            try await client.send(type: "AddProduct", data: [:], commandId: "hollow")
        }
        #expect(hollow?.isMalformedReply == true)
        client.close()
        await server.stop()
    }

    @Test func manyConcurrentRequestsEachGetTheirOwnReply() async throws {
        // Replies come back after random delays, so out of order.
        let server = try await ScriptedServer { request in
            let n = request.document?["data"]?.objectValue?["n"]?.intValue ?? -1
            return [.reply(success(request, ["tripled": .int(3 * n)]), after: .milliseconds(Int.random(in: 0...30)))]
        }
        let client = try LogbookClient(endpoints: server.endpoints, timeout: .seconds(5))
        let count = 300
        let answers = try await withThrowingTaskGroup(of: (Int, JSONObject).self) { group in
            for n in 0..<count {
                group.addTask {
                    let target = ServerEndpoint.allCases[n % 3]
                    let reply = try await client.request(target, ["id": .string("r-\(n)"), "data": ["n": .int(n)]])
                    return (n, reply)
                }
            }
            var answers: [Int: JSONObject] = [:]
            for try await (n, reply) in group { answers[n] = reply }
            return answers
        }
        #expect(answers.count == count)
        for (n, reply) in answers {
            #expect(reply["id"] == .string("r-\(n)") && reply["tripled"] == .int(3 * n))
        }
        // Nothing was retried, and many requests were in flight at once.
        #expect(server.requests.count == count)
        #expect(server.mostWaitingReplies > 10)
        client.close()
        await server.stop()
    }

    @Test func droppedAttemptIsRetriedWithTheSameIdOnAFreshSocket() async throws {
        let server = try await ScriptedServer { request in
            request.id == "cmd-1" && request.sighting == 1 ? [] : echo(request)
        }
        // An attempt long enough that a loaded machine answers the retry inside it.
        let client = try LogbookClient(endpoints: server.endpoints, timeout: .seconds(1), attempts: 3)
        let document: JSONObject = ["id": "cmd-1", "type": "AddProduct", "data": ["productId": "p1"]]

        let started = ContinuousClock.now
        let reply = try await client.request(.commands, document)
        #expect(ContinuousClock.now - started >= .seconds(1))
        #expect(reply["echo"] == .object(document))
        let attempts = server.requests(id: "cmd-1")
        try #require(attempts.count == 2)
        #expect(attempts[0].identity != attempts[1].identity)
        #expect(attempts[0].frames == attempts[1].frames)

        // The fresh socket stays: the next request goes out on it, once.
        _ = try await client.request(.commands, ["id": "cmd-2"])
        #expect(server.requests(id: "cmd-2").map(\.identity) == [attempts[1].identity])
        client.close()
        await server.stop()
    }

    @Test func everyRequestStillWaitingIsResentOnTheFreshSocket() async throws {
        // "slow" is lost; "other" is answered on its first socket only after that socket
        // was given up, so only its resend on the fresh socket can answer it.
        let server = try await ScriptedServer { request in
            switch (request.id, request.sighting) {
            case ("slow", 1): []
            // Late by a wide margin (the first socket is given up 4 s after "slow" was
            // sent, about 2 s before this reply), so a loaded machine cannot reorder them.
            case ("other", 1): [.reply(success(request, ["from": "abandoned socket"]), after: .milliseconds(6_000))]
            default: [.reply(success(request, ["from": .string("attempt \(request.sighting)")]))]
            }
        }
        // "other" goes out 100 ms after "slow", well inside the 4 s before the first socket is
        // given up (1.5 s was once not enough on a loaded machine with two cores).
        let client = try LogbookClient(endpoints: server.endpoints, timeout: .seconds(4), attempts: 2)
        async let slow = client.request(.commands, ["id": "slow"])
        try await server.waitUntilReceived("slow")
        try await Task.sleep(for: .milliseconds(100))
        async let other = client.request(.commands, ["id": "other"])

        #expect(try await slow["from"] == "attempt 2")
        #expect(try await other["from"] == "attempt 2")
        let slowAttempts = server.requests(id: "slow")
        let otherAttempts = server.requests(id: "other")
        try #require(slowAttempts.count == 2 && otherAttempts.count == 2)
        #expect(otherAttempts[0].identity == slowAttempts[0].identity)
        #expect(otherAttempts[1].identity == slowAttempts[1].identity)
        #expect(otherAttempts[0].frames == otherAttempts[1].frames)
        client.close()
        await server.stop()
    }

    @Test func lateReplyToAnAbandonedSocketNeverAnswersALaterRequest() async throws {
        // First attempt: no answer. Retry: answered. The same id sent again later: the
        // server first answers the abandoned first socket ("late"), then this one.
        let server = try await ScriptedServer { request in
            switch request.sighting {
            case 1: []
            case 2: [.reply(success(request, ["answer": "fresh"]))]
            default:
                [
                    .replyTo(identity: request.earlierIdentities[0], success(request, ["answer": "late"])),
                    .reply(success(request, ["answer": "third"]), after: .milliseconds(100)),
                ]
            }
        }
        let client = try LogbookClient(endpoints: server.endpoints, timeout: .milliseconds(1_500), attempts: 3)

        #expect(try await client.request(.commands, ["id": "a"])["answer"] == "fresh")
        #expect(try await client.request(.commands, ["id": "a"])["answer"] == "third")
        let attempts = server.requests(id: "a")
        #expect(attempts.count == 3)
        #expect(attempts.count == 3 && attempts[1].identity == attempts[2].identity)
        client.close()
        await server.stop()
    }

    @Test func withNoServerARequestTimesOutAfterItsAttempts() async throws {
        let nowhere = try unusedEndpoint()
        let client = try LogbookClient(
            endpoints: ClientEndpoints(commands: nowhere, queries: nowhere, log: nowhere),
            timeout: .milliseconds(100), attempts: 3)
        let started = ContinuousClock.now
        await #expect(throws: LogbookClientError.timedOut(.commands, attempts: 3)) {
            try await client.request(.commands, ["id": "x"])
        }
        // Three attempts of 100 ms each were waited out (no upper bound: a loaded machine is slow).
        #expect(ContinuousClock.now - started >= .milliseconds(300))
        client.close()
    }

    @Test func silentServerSeesExactlyAttemptsTriesEachFromAFreshSocket() async throws {
        let server = try await ScriptedServer { _ in [] }
        let client = try LogbookClient(endpoints: server.endpoints, timeout: .milliseconds(100), attempts: 4)
        await #expect(throws: LogbookClientError.timedOut(.queries, attempts: 4)) {
            try await client.query(type: "ListUsers")
        }
        try await Task.sleep(for: .milliseconds(250))
        let attempts = server.requests
        #expect(attempts.count == 4)
        #expect(Set(attempts.compactMap(\.id)).count == 1)
        #expect(Set(attempts.map(\.identity)).count == 4)
        client.close()
        await server.stop()
    }

    @Test func cancellingTheCallingTaskFailsItsRequestPromptly() async throws {
        let server = try await ScriptedServer { request in
            request.id == "hang" && request.sighting == 1 || request.id == "never" ? [] : echo(request)
        }
        let client = try LogbookClient(endpoints: server.endpoints, timeout: .seconds(10), attempts: 1)
        let waiting = Task { try await client.request(.commands, ["id": "hang"]) }
        try await server.waitUntilReceived("hang")

        // With a 10 s timeout and one attempt, only cancellation can end it as `.cancelled`.
        waiting.cancel()
        let outcome = await waiting.result
        #expect(throws: LogbookClientError.cancelled) { try outcome.get() }

        // The client goes on, and the id is free again.
        #expect(try await client.request(.commands, ["id": "after"])["id"] == "after")
        #expect(try await client.request(.commands, ["id": "hang"])["id"] == "hang")

        // A task cancelled before it asks sends nothing.
        let early = await withTaskGroup(of: Result<JSONObject, LogbookClientError>.self) { group in
            group.cancelAll()
            group.addTask {
                do throws(LogbookClientError) {
                    return .success(try await client.request(.commands, ["id": "never"]))
                } catch {
                    return .failure(error)
                }
            }
            return await group.next()
        }
        #expect(early == .failure(.cancelled))
        try await Task.sleep(for: .milliseconds(100))
        #expect(server.requests(id: "never").isEmpty)
        client.close()
        await server.stop()
    }

    @Test func closeFailsWaitingRequestsAndRefusesNewOnes() async throws {
        let server = try await ScriptedServer { _ in [] }
        let client = try LogbookClient(endpoints: server.endpoints, timeout: .seconds(10))
        let waiting = Task { try await client.request(.queries, ["id": "w"]) }
        try await server.waitUntilReceived("w")

        // With a 10 s timeout, only the close can end it as `.closed`.
        client.close()
        let outcome = await waiting.result
        #expect(throws: LogbookClientError.closed) { try outcome.get() }
        await #expect(throws: LogbookClientError.closed) { try await client.request(.queries, ["id": "later"]) }
        await #expect(throws: LogbookClientError.closed) { try await client.status(of: .commands) }
        client.close()
        await server.stop()
        #expect(server.requests.count == 1)
    }

    @Test func repliesWithoutAUsableIdOrNotJSONAreIgnored() async throws {
        let server = try await ScriptedServer { request in
            guard request.id == "real" else { return echo(request) }
            return [
                .raw([[], bytes("not json")]),
                .raw([[], bytes("[1,2]")]),
                .raw([[], []]),
                .raw([[], bytes(#"{"ok":true,"answer":"no id"}"#)]),
                .raw([[], bytes(#"{"id":42,"ok":true}"#)]),
                .raw([[], bytes(#"{"id":"someone-else","ok":true}"#)]),
                .raw([bytes(#"{"id":"real","ok":true,"answer":"no delimiter"}"#)]),
                .raw([[], bytes(#"{"id":"real","ok":true,"answer":"three frames"}"#), bytes("extra")]),
                .raw([[], [0xFF, 0xFE, 0x7B]]),
                .reply(success(request, ["answer": "the real one"])),
            ]
        }
        let client = try LogbookClient(endpoints: server.endpoints, timeout: .seconds(3))
        #expect(try await client.request(.commands, ["id": "real"])["answer"] == "the real one")
        #expect(try await client.request(.commands, ["id": "next"])["id"] == "next")
        #expect(server.requests.count == 2)
        client.close()
        await server.stop()
    }

    @Test func requestsWithoutAnIdOrWithOneAlreadyWaitingAreRefused() async throws {
        let server = try await ScriptedServer { request in
            request.id == "dup" && request.sighting == 1 ? [] : echo(request)
        }
        let client = try LogbookClient(endpoints: server.endpoints, timeout: .seconds(10))
        for document: JSONObject in [["type": "Status"], ["id": 5], ["id": ""]] {
            let refusal = await #expect(throws: LogbookClientError.self) {
                try await client.request(.commands, document)
            }
            #expect(refusal?.isInvalidRequest == true)
        }
        let oversized = await #expect(throws: LogbookClientError.self) {
            let text = String(repeating: "x", count: WireRequest.maximumSize)
            return try await client.request(.commands, ["id": "big", "data": ["text": .string(text)]])
        }
        #expect(oversized?.isInvalidRequest == true)
        #expect(server.requests.isEmpty)

        let waiting = Task { try await client.request(.commands, ["id": "dup"]) }
        try await server.waitUntilReceived("dup")
        let refusal = await #expect(throws: LogbookClientError.self) {
            try await client.request(.commands, ["id": "dup"])
        }
        #expect(refusal?.isInvalidRequest == true)
        // Ids belong to one server: the same id may wait on another.
        #expect(try await client.request(.queries, ["id": "dup"])["id"] == "dup")
        #expect(server.requests(id: "dup").count == 2)
        client.close()
        await #expect(throws: LogbookClientError.closed) { try await waiting.value }
        await server.stop()
    }

    @Test func malformedEndpointIsATransportErrorOfThatRequestOnly() async throws {
        let server = try await ScriptedServer(echo)
        let client = try LogbookClient(
            endpoints: ClientEndpoints(commands: "nonsense", queries: server.endpoint), timeout: .seconds(3))
        let failure = await #expect(throws: LogbookClientError.self) {
            try await client.request(.commands, ["id": "c"])
        }
        #expect(failure?.isTransport == true)
        #expect(try await client.request(.queries, ["id": "q"])["id"] == "q")
        client.close()
        await server.stop()
    }

    @Test func droppingTheLastReferenceClosesTheClient() async throws {
        let server = try await ScriptedServer(echo)
        var client: LogbookClient? = try LogbookClient(endpoints: server.endpoints, timeout: .seconds(3))
        weak let observed = client
        #expect(try await client?.request(.commands, ["id": "one"])["id"] == "one")
        client = nil
        #expect(observed == nil)
        await server.stop()
    }

    @Test func endpointsDefaultToTheServiceDefaults() {
        let endpoints = ClientEndpoints()
        #expect(endpoints.commands.endpoints == ["tcp://127.0.0.1:5555"])
        #expect(endpoints.feed == "tcp://127.0.0.1:5556")
        #expect(endpoints.queries == "tcp://127.0.0.1:5557")
        #expect(endpoints.log == "tcp://127.0.0.1:5558")
        #expect(endpoints.groups == "tcp://127.0.0.1:5560")
        #expect(
            ServerEndpoint.allCases.map(endpoints.address(of:)) == [
                "tcp://127.0.0.1:5555", endpoints.queries, endpoints.log, endpoints.groups,
            ])
        #expect(ClientEndpoints(ServiceEndpoints.defaults) == endpoints)
    }
}

extension LogbookClientError {
    fileprivate var isInvalidRequest: Bool { if case .invalidRequest = self { true } else { false } }
    fileprivate var isMalformedReply: Bool { if case .malformedReply = self { true } else { false } }
    fileprivate var isTransport: Bool { if case .transport = self { true } else { false } }
}

/// A tcp endpoint on loopback nobody listens on (bound once, then released).
private func unusedEndpoint() throws -> String {
    let context = try ZMQContext()
    let socket = try ZMQSocket(context, .router)
    try socket.bind("tcp://127.0.0.1:*")
    return try socket.lastEndpoint()
}

private func event(position: Int64, stream: String, type: String, data: String) -> RecordedEvent {
    RecordedEvent(
        position: position, eventId: "event-\(position)", stream: stream, version: 1, type: type, data: data,
        metadata: EventMetadata(commandId: "c-1", correlationId: "c-1", causationId: "c-1"),
        recordedAt: 1_764_000_000_123)
}
