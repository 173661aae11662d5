import LogbookApplication
import LogbookTestSupport
import Testing

/// The contract for command ids: a command id commits once; every later request with it
/// appends nothing and gets the first outcome back.
@Suite("EventStore contract: idempotency")
struct IdempotencyContractTests {
    @Test("a repeated command id appends nothing and returns the first events", arguments: StoreKind.allCases)
    func repeatedCommandId(kind: StoreKind) throws {
        let store = try StoreHarness(kind).store
        let first = try #require(try store.append([Requests.simple("c1", stream: "a-1", count: 2)])[0].committed)
        let again = try store.append([Requests.simple("c1", stream: "a-1", count: 5)])
        #expect(again == [.duplicate(.appended(first))])
        #expect(try store.headPosition() == 2)
        #expect(try store.commandRecord("c1") == .appended(first))
    }

    @Test("a command id repeated inside one batch commits once", arguments: StoreKind.allCases)
    func repeatedWithinBatch(kind: StoreKind) throws {
        let store = try StoreHarness(kind).store
        let results = try store.append([
            Requests.simple("c1", stream: "a-1"), Requests.simple("c1", stream: "b-1"),
            Requests.simple("c2", stream: "b-1"),
        ])
        let first = try #require(results[0].committed)
        #expect(results[1] == .duplicate(.appended(first)))
        #expect(results[2].committed?.events.first?.position == 2)
        #expect(try store.readStream("b-1", fromVersion: 1, limit: 10).count == 1)
    }

    @Test("a duplicate wins over a failed expectation: the first outcome is returned", arguments: StoreKind.allCases)
    func duplicateBeforeExpectation(kind: StoreKind) throws {
        let store = try StoreHarness(kind).store
        let first = try #require(
            try store.append([Requests.request("c1", [Requests.event("a-1")], expecting: ["a-1": .noStream])])[0]
                .committed)
        let retry = try store.append([Requests.request("c1", [Requests.event("a-1")], expecting: ["a-1": .noStream])])
        #expect(retry == [.duplicate(.appended(first))])
    }

    @Test("a conflicting request records no command id, so it can be tried again", arguments: StoreKind.allCases)
    func conflictRecordsNothing(kind: StoreKind) throws {
        let store = try StoreHarness(kind).store
        _ = try store.append([Requests.simple("c0", stream: "a-1")])
        #expect(
            try store.append([Requests.request("c1", [Requests.event("a-1")], expecting: ["a-1": .noStream])])[0]
                .conflict != nil)
        #expect(try store.commandRecord("c1") == nil)
        #expect(
            try store.append([Requests.request("c1", [Requests.event("a-1")], expecting: ["a-1": .exactly(1)])])[0]
                .committed != nil)
    }

    @Test("a command that appended nothing keeps its answer, and a retry gets it back", arguments: StoreKind.allCases)
    func answeredCommands(kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        _ = try harness.store.append([Requests.simple("c0", stream: "a-1")])
        let refusal = #"{"ok":false,"error":{"code":"not_found","message":"no"}}"#
        let results = try harness.store.append([
            Requests.answer("c1", refusal, expecting: ["a-1": .exactly(1)]),
            Requests.answer("c2", expecting: ["b-1": .noStream]),
        ])
        #expect(
            results == [
                .committed(.answered(commandId: "c1", position: 1, answer: refusal)),
                .committed(.answered(commandId: "c2", position: 1, answer: #"{"ok":true}"#)),
            ])
        #expect(try harness.store.headPosition() == 1, "answers append no events")
        try harness.reopen()
        #expect(try harness.store.commandRecord("c1") == .answered(commandId: "c1", position: 1, answer: refusal))
        #expect(
            try harness.store.append([Requests.simple("c1", stream: "a-1")]) == [
                .duplicate(.answered(commandId: "c1", position: 1, answer: refusal))
            ])
        #expect(try harness.store.headPosition() == 1)
    }

    @Test("an answer decided on stale state is refused like any other stale write", arguments: StoreKind.allCases)
    func staleAnswer(kind: StoreKind) throws {
        let store = try StoreHarness(kind).store
        _ = try store.append([Requests.simple("c0", stream: "a-1")])
        let result = try store.append([Requests.answer("c1", expecting: ["a-1": .noStream])])
        #expect(result[0].conflict == VersionConflict(stream: "a-1", expected: .noStream, actual: 1))
        #expect(try store.commandRecord("c1") == nil)
    }

    @Test("a request with both events and an answer is refused", arguments: StoreKind.allCases)
    func eventsAndAnswer(kind: StoreKind) throws {
        let store = try StoreHarness(kind).store
        #expect(throws: EventStoreError.self) {
            try store.append([Requests.request("c1", [Requests.event("a-1")], answer: #"{"ok":true}"#)])
        }
        #expect(try store.headPosition() == 0)
    }
}
