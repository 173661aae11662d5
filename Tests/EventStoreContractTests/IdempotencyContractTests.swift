import LogbookApplication
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
        #expect(again == [.duplicate(first)])
        #expect(try store.headPosition() == 2)
        #expect(try store.committedCommand("c1") == first)
    }

    @Test("a command id repeated inside one batch commits once", arguments: StoreKind.allCases)
    func repeatedWithinBatch(kind: StoreKind) throws {
        let store = try StoreHarness(kind).store
        let results = try store.append([
            Requests.simple("c1", stream: "a-1"), Requests.simple("c1", stream: "b-1"),
            Requests.simple("c2", stream: "b-1"),
        ])
        let first = try #require(results[0].committed)
        #expect(results[1] == .duplicate(first))
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
        #expect(retry == [.duplicate(first)])
    }

    @Test("a conflicting request records no command id, so it can be tried again", arguments: StoreKind.allCases)
    func conflictRecordsNothing(kind: StoreKind) throws {
        let store = try StoreHarness(kind).store
        _ = try store.append([Requests.simple("c0", stream: "a-1")])
        #expect(
            try store.append([Requests.request("c1", [Requests.event("a-1")], expecting: ["a-1": .noStream])])[0]
                .conflict != nil)
        #expect(try store.committedCommand("c1") == nil)
        #expect(
            try store.append([Requests.request("c1", [Requests.event("a-1")], expecting: ["a-1": .exactly(1)])])[0]
                .committed != nil)
    }
}
