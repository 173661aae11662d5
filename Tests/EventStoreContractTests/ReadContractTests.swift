import LogbookApplication
import LogbookTestSupport
import Testing

/// The contract for reads: by position, by category, by stream, from any point, in order.
@Suite("EventStore contract: reads and durability")
struct ReadContractTests {
    /// Appends user, product and order events interleaved: 12 events in all.
    private func seed(_ store: any EventStore) throws {
        for n in 1...4 {
            _ = try store.append([
                Requests.simple("u\(n)", stream: "user-u\(n % 2)"),
                Requests.request("p\(n)", [Requests.event("product-p1"), Requests.event("order-o\(n)")]),
            ])
        }
    }

    @Test("reading from any position returns the rest of the log in order", arguments: StoreKind.allCases)
    func readFromAnyPosition(kind: StoreKind) throws {
        let store = try StoreHarness(kind).store
        try seed(store)
        for from in Int64(0)...14 {
            let events = try store.read(fromPosition: from, limit: 100, categories: nil)
            #expect(events.map(\.position) == (Int64(1)...12).filter { $0 >= from })
        }
        #expect(try store.read(fromPosition: 3, limit: 4, categories: nil).map(\.position) == [3, 4, 5, 6])
        #expect(try store.read(fromPosition: 1, limit: 0, categories: nil).isEmpty)
    }

    @Test("several whole streams read at once are each stream's events in version order", arguments: StoreKind.allCases)
    func readWholeStreams(kind: StoreKind) throws {
        let store = try StoreHarness(kind).store
        try seed(store)
        let streams = ["product-p1", "user-u0", "order-o3", "user-nobody", "product-p1"]
        let found = try store.readWholeStreams(streams)
        #expect(Set(found.keys) == Set(streams))
        for stream in Set(streams) {
            #expect(found[stream] == (try store.readWholeStream(stream)), "\(stream)")
        }
        #expect(found["product-p1"]?.map(\.version) == [1, 2, 3, 4])
        #expect(found["user-nobody"] == [])
        #expect(try store.readWholeStreams([]).isEmpty)
    }

    @Test("reading by category keeps log order and honours the limit", arguments: StoreKind.allCases)
    func readByCategory(kind: StoreKind) throws {
        let store = try StoreHarness(kind).store
        try seed(store)
        let all = try store.read(fromPosition: 1, limit: 100, categories: nil)
        let wanted: Set<String> = ["product", "order"]
        let expected = all.filter { wanted.contains($0.category) }
        #expect(try store.read(fromPosition: 1, limit: 100, categories: wanted) == expected)
        #expect(
            try store.read(fromPosition: 5, limit: 3, categories: wanted)
                == Array(expected.filter { $0.position >= 5 }.prefix(3)))
        #expect(
            try store.read(fromPosition: 1, limit: 100, categories: ["user"]).allSatisfy {
                $0.stream.hasPrefix("user-")
            })
        #expect(try store.read(fromPosition: 1, limit: 100, categories: ["nothing"]).isEmpty)
        #expect(try store.read(fromPosition: 1, limit: 100, categories: []).isEmpty)
    }

    @Test("reading a stream starts at any version and pages", arguments: StoreKind.allCases)
    func readStream(kind: StoreKind) throws {
        let store = try StoreHarness(kind).store
        try seed(store)
        let product = try store.readStream("product-p1", fromVersion: 1, limit: 100)
        #expect(product.map(\.version) == [1, 2, 3, 4])
        #expect(try store.readStream("product-p1", fromVersion: 3, limit: 100).map(\.version) == [3, 4])
        #expect(try store.readStream("product-p1", fromVersion: 2, limit: 2).map(\.version) == [2, 3])
        #expect(try store.readStream("product-p1", fromVersion: 5, limit: 100).isEmpty)
        #expect(try store.readWholeStream("product-p1", pageSize: 3) == product)
        #expect(try store.readStream("product-p", fromVersion: 1, limit: 100).isEmpty)
        #expect(try store.readStream("product-p1", fromVersion: 2, limit: .max).map(\.version) == [2, 3, 4])
        #expect(try store.read(fromPosition: 2, limit: .max, categories: nil).count == 11)
        #expect(try store.read(fromPosition: .max, limit: .max, categories: nil).isEmpty)
    }

    @Test("reopening keeps every event and appends continue where they left off", arguments: StoreKind.allCases)
    func reopenKeepsEverything(kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        try seed(harness.store)
        let before = try harness.store.read(fromPosition: 1, limit: 100, categories: nil)
        try harness.reopen()
        #expect(try harness.store.read(fromPosition: 1, limit: 100, categories: nil) == before)
        #expect(try harness.store.commandRecord("p2")?.events.count == 2)
        let next = try harness.store.append([
            Requests.request("late", [Requests.event("product-p1")], expecting: ["product-p1": .exactly(4)])
        ])
        #expect(next[0].committed?.events.map { [$0.position, Int64($0.version)] } == [[13, 5]])
        #expect(try harness.store.append([Requests.simple("p2", stream: "x-1")])[0].duplicate != nil)
    }

    @Test("committed events cannot be changed or removed", arguments: StoreKind.allCases)
    func appendOnly(kind: StoreKind) throws {
        let harness = try StoreHarness(kind)
        try seed(harness.store)
        let before = try harness.store.read(fromPosition: 1, limit: 100, categories: nil)
        // The in-memory store offers no way to change an event; durable stores must refuse it in the database itself.
        let attempts = [
            "UPDATE events SET data = '{}' WHERE position = 1",
            "DELETE FROM events WHERE position = 12",
            "DELETE FROM events",
            "UPDATE commands SET last_position = 1",
            "DELETE FROM commands",
        ]
        for sql in attempts {
            if let result = harness.rawSQL(sql) {
                #expect(!result.succeeded, "\(sql) should be refused")
                #expect(result.message.contains("append-only"), "\(sql): \(result.message)")
            }
        }
        try harness.reopen()
        #expect(try harness.store.read(fromPosition: 1, limit: 100, categories: nil) == before)
    }
}
