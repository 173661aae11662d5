import LogbookApplication
import LogbookTestSupport
import Testing

/// The contract every `EventStore` keeps for appends: ordering, contiguous positions and
/// versions, expectations, atomicity and group commit.
@Suite("EventStore contract: appends")
struct AppendContractTests {
    @Test("an empty log has head 0 and nothing to read", arguments: StoreKind.allCases)
    func emptyLog(kind: StoreKind) throws {
        let store = try StoreHarness(kind).store
        #expect(try store.headPosition() == 0)
        #expect(try store.read(fromPosition: 1, limit: 100, categories: nil).isEmpty)
        #expect(try store.readStream("user-u1", fromVersion: 1, limit: 100).isEmpty)
        #expect(try store.commandRecord("c1") == nil)
    }

    @Test("an append records every field and numbers positions and versions from 1", arguments: StoreKind.allCases)
    func recordsEverything(kind: StoreKind) throws {
        let store = try StoreHarness(kind).store
        let first = Requests.event("user-u1", "UserRegistered", data: #"{"userId":"u1","name":"Zoë ✓"}"#)
        let second = Requests.event("email-ann@example.com", "EmailClaimed")
        let result = try store.append([Requests.request("c1", [first, second], expecting: ["user-u1": .noStream])])
        let committed = try #require(result.first?.committed)
        #expect(committed.commandId == "c1")
        #expect(committed.events.map(\.position) == [1, 2])
        #expect(committed.events.map(\.version) == [1, 1])
        let recorded = committed.events[0]
        #expect(recorded.eventId == first.eventId)
        #expect(recorded.stream == "user-u1")
        #expect(recorded.category == "user")
        #expect(recorded.type == "UserRegistered")
        #expect(recorded.data == #"{"userId":"u1","name":"Zoë ✓"}"#)
        #expect(recorded.recordedAt == first.recordedAt)
        #expect(recorded.metadata == EventMetadata(commandId: "c1", correlationId: "corr-c1", causationId: "c1"))
        #expect(try store.read(fromPosition: 1, limit: 10, categories: nil) == committed.events)
        #expect(try store.headPosition() == 2)
    }

    @Test("positions run 1, 2, 3 … across streams and versions per stream", arguments: StoreKind.allCases)
    func contiguousPositionsAndVersions(kind: StoreKind) throws {
        let store = try StoreHarness(kind).store
        let streams = ["a-1", "b-1", "a-2", "a-1"]
        for round in 0..<5 {
            let batch = streams.enumerated().map {
                Requests.simple("r\(round)-\($0.offset)", stream: $0.element, count: 2)
            }
            _ = try store.append(batch)
        }
        let all = try store.read(fromPosition: 1, limit: 1000, categories: nil)
        #expect(all.map(\.position) == Array(1...40))
        for stream in Set(streams) {
            let events = try store.readStream(stream, fromVersion: 1, limit: 1000)
            #expect(events.map(\.version) == Array(1...events.count))
            #expect(events.map(\.position) == events.map(\.position).sorted())
        }
        #expect(try store.readStream("a-1", fromVersion: 1, limit: 1000).count == 20)
    }

    @Test("expected versions are checked: any, noStream, exact", arguments: StoreKind.allCases)
    func expectedVersions(kind: StoreKind) throws {
        let store = try StoreHarness(kind).store
        let s = "product-p1"
        #expect(
            try store.append([Requests.request("c1", [Requests.event(s)], expecting: [s: .exactly(1)])])
                == [.conflict(VersionConflict(stream: s, expected: .exactly(1), actual: 0))])
        #expect(
            try store.append([Requests.request("c2", [Requests.event(s)], expecting: [s: .noStream])])[0].committed
                != nil)
        #expect(
            try store.append([Requests.request("c3", [Requests.event(s)], expecting: [s: .noStream])])
                == [.conflict(VersionConflict(stream: s, expected: .noStream, actual: 1))])
        #expect(
            try store.append([Requests.request("c4", [Requests.event(s)], expecting: [s: .exactly(2)])])
                == [.conflict(VersionConflict(stream: s, expected: .exactly(2), actual: 1))])
        #expect(
            try store.append([Requests.request("c5", [Requests.event(s)], expecting: [s: .exactly(1)])])[0].committed
                != nil)
        #expect(
            try store.append([Requests.request("c6", [Requests.event(s)], expecting: [s: .any])])[0].committed != nil)
        #expect(try store.readStream(s, fromVersion: 1, limit: 10).map(\.version) == [1, 2, 3])
        #expect(try store.headPosition() == 3)
    }

    @Test("an expectation on a stream that is only read is checked too", arguments: StoreKind.allCases)
    func readOnlyExpectation(kind: StoreKind) throws {
        let store = try StoreHarness(kind).store
        _ = try store.append([Requests.simple("c1", stream: "user-u1")])
        let request = Requests.request(
            "c2", [Requests.event("post-p1")], expecting: ["post-p1": .noStream, "user-u1": .noStream])
        #expect(
            try store.append([request]) == [
                .conflict(VersionConflict(stream: "user-u1", expected: .noStream, actual: 1))
            ])
        #expect(try store.readStream("post-p1", fromVersion: 1, limit: 10).isEmpty)
    }

    @Test("a request is atomic: one failed expectation appends none of its streams", arguments: StoreKind.allCases)
    func atomicity(kind: StoreKind) throws {
        let store = try StoreHarness(kind).store
        _ = try store.append([Requests.simple("c1", stream: "order-o1")])
        let purchase = Requests.request(
            "c2", [Requests.event("product-p1"), Requests.event("order-o1")],
            expecting: ["product-p1": .noStream, "order-o1": .noStream])
        let result = try store.append([purchase])
        #expect(result[0].conflict?.stream == "order-o1")
        #expect(try store.readStream("product-p1", fromVersion: 1, limit: 10).isEmpty)
        #expect(try store.readStream("order-o1", fromVersion: 1, limit: 10).count == 1)
        #expect(try store.headPosition() == 1)
        #expect(try store.commandRecord("c2") == nil)
    }

    @Test("group commit: each request of a batch stands alone, in order, without holes", arguments: StoreKind.allCases)
    func groupCommit(kind: StoreKind) throws {
        let store = try StoreHarness(kind).store
        let results = try store.append([
            Requests.request("c1", [Requests.event("a-1")], expecting: ["a-1": .noStream]),
            Requests.request("c2", [Requests.event("a-1")], expecting: ["a-1": .noStream]),  // conflicts with c1
            Requests.request("c3", [Requests.event("b-1"), Requests.event("b-1")], expecting: ["b-1": .noStream]),
            Requests.request("c4", [Requests.event("a-1")], expecting: ["a-1": .exactly(1)]),  // sees c1
        ])
        #expect(results.count == 4)
        #expect(results[0].committed?.events.map(\.position) == [1])
        #expect(results[1].conflict == VersionConflict(stream: "a-1", expected: .noStream, actual: 1))
        #expect(results[2].committed?.events.map(\.position) == [2, 3])
        #expect(results[3].committed?.events.map { [$0.position, Int64($0.version)] } == [[4, 2]])
        #expect(try store.read(fromPosition: 1, limit: 10, categories: nil).map(\.position) == [1, 2, 3, 4])
        #expect(try store.commandRecord("c2") == nil)
    }

    @Test("a request with no events is refused and nothing of its batch is appended", arguments: StoreKind.allCases)
    func emptyRequestRefused(kind: StoreKind) throws {
        let store = try StoreHarness(kind).store
        #expect(throws: EventStoreError.self) {
            try store.append([Requests.simple("c1", stream: "a-1"), Requests.request("c2", [])])
        }
        #expect(try store.headPosition() == 0)
    }

    @Test("appends from several threads at once lose nothing and leave no holes", arguments: StoreKind.allCases)
    func concurrentAppends(kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        let store = harness.store
        let writers = 4
        let perWriter = 50
        let errors = onThreads(writers) { writer in
            for n in 0..<perWriter {
                let result = try store.append([Requests.simple("w\(writer)-c\(n)", stream: "w\(writer)-\(n % 3)")])
                #expect(result.first?.committed != nil)
            }
        }
        #expect(errors.isEmpty, "\(errors)")
        let all = try store.read(fromPosition: 1, limit: 10_000, categories: nil)
        #expect(all.map(\.position) == (1...Int64(writers * perWriter)).map { $0 })
        #expect(Set(all.map(\.metadata.commandId)).count == writers * perWriter)
    }
}

/// The contract for dependencies inside a batch: a request that leaned on an earlier
/// request's uncommitted events stands only if that request commits in the same batch.
@Suite("EventStore contract: dependencies within a batch")
struct DependencyContractTests {
    @Test(
        "a request whose dependency conflicts is abandoned even when its own versions match",
        arguments: StoreKind.allCases)
    func abandonedWhenDependencyFails(kind: StoreKind) throws {
        let store = try StoreHarness(kind).store
        _ = try store.append([Requests.simple("c0", stream: "p-1")])
        // Another writer got there first: p-1 is now at version 2.
        _ = try store.append([Requests.simple("other", stream: "p-1")])
        // Our batch: c1 expected p-1 at 1 (stale); c2 was decided on c1's staged event, so it expects 2.
        let results = try store.append([
            Requests.request("c1", [Requests.event("p-1")], expecting: ["p-1": .exactly(1)]),
            Requests.request("c2", [Requests.event("p-1")], expecting: ["p-1": .exactly(2)], after: ["c1"]),
            Requests.answer("c3", expecting: ["p-1": .exactly(3)], after: ["c1", "c2"]),
            Requests.simple("c4", stream: "q-1"),
        ])
        #expect(results[0].conflict != nil)
        #expect(results[1].abandonedFor == "c1")
        #expect(results[2].abandonedFor == "c1")
        #expect(results[3].committed != nil, "an independent request still commits")
        #expect(try store.readStream("p-1", fromVersion: 1, limit: 10).map(\.metadata.commandId) == ["c0", "other"])
        #expect(try store.commandRecord("c2") == nil)
    }

    @Test("a request whose dependencies all commit in the batch commits", arguments: StoreKind.allCases)
    func committedWhenDependenciesCommit(kind: StoreKind) throws {
        let store = try StoreHarness(kind).store
        let results = try store.append([
            Requests.request("c1", [Requests.event("p-1")], expecting: ["p-1": .noStream]),
            Requests.request("c2", [Requests.event("p-1")], expecting: ["p-1": .exactly(1)], after: ["c1"]),
        ])
        #expect(results.map { $0.committed != nil } == [true, true])
    }

    @Test(
        "a dependency that was already recorded before this batch does not count as committed here",
        arguments: StoreKind.allCases)
    func duplicateDependencyDoesNotCount(kind: StoreKind) throws {
        let store = try StoreHarness(kind).store
        _ = try store.append([Requests.simple("c1", stream: "p-1")])
        let results = try store.append([
            Requests.simple("c1", stream: "p-1"),
            Requests.request("c2", [Requests.event("p-1")], expecting: ["p-1": .exactly(2)], after: ["c1"]),
        ])
        #expect(results[0].duplicate != nil)
        #expect(results[1].abandonedFor == "c1")
    }
}
