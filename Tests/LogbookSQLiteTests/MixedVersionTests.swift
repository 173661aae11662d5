import Foundation
import LogbookApplication
import LogbookJSON
import LogbookSQLite
import LogbookTestSupport
import Testing

/// A log shared by an older and a newer build during an upgrade: the newer one writes
/// `ProductRestocked` at version 2, which the older one cannot read. Whatever the older
/// build cannot read costs only the requests that need it, and a retried command id still
/// gets its first outcome.
@Suite("Mixed versions on one SQLite log")
struct MixedVersionTests {
    /// A newer build's history: `ProductRestocked` has a version 2 (the same shape, for the test).
    static let newer = EventEvolution([
        EventUpcaster(type: "ProductRestocked", fromVersion: 1) { payload throws(EventUpcastError) in payload }
    ])

    private static func handler(_ store: any EventStore, _ prefix: String) -> CommandHandler {
        CommandHandler(
            store: store, clock: StepClock(), ids: CountingIds(prefix: prefix), buckets: .forTests, cacheCapacity: 100)
    }

    /// Runs `body` with the path of a new log in a folder of its own, removed afterwards.
    private func withLog(_ body: (String) throws -> Void) throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        try body(directory.appendingPathComponent("events.sqlite3").path)
    }

    private static func product(_ id: String) -> JSONValue {
        ["productId": .string(id), "name": "Tea", "price": "1.00", "category": "food", "stock": 3]
    }

    @Test(
        "given an id recorded with events the store cannot read, when it is sent again in a batch, then only it fails")
    func unreadableDuplicateFailsAlone() throws {
        try withLog { path in
            let older = try SQLiteEventStore(path: path)
            let newer = try SQLiteEventStore(path: path, evolution: Self.newer)
            _ = try newer.append([Requests.request("x", [Requests.event("product-p1", "ProductRestocked")])])
            let results = try older.append([
                Requests.request("x", [Requests.event("product-p1", "ProductRestocked")]),
                Requests.simple("y", stream: "post-p9"),
            ])
            guard case .unreadableRecord(.unreadableEvent(let position, _))? = results.first else {
                Issue.record("expected an unreadable record for x, got \(results)")
                return
            }
            #expect(position == 1)
            #expect(results.last?.committed?.lastPosition == 2, "y has nothing to do with x")
        }
    }

    @Test("given a retried id on a stale cache over an unreadable event, when batched, then the others still commit")
    func unreadableRetryLeavesTheBatchAlone() throws {
        try withLog { path in
            let olderStore = try SQLiteEventStore(path: path)
            let newerStore = try SQLiteEventStore(path: path, evolution: Self.newer)
            let older = Self.handler(olderStore, "a")
            let newer = Self.handler(newerStore, "b")
            let add = CommandRequest(commandId: "c1", type: "AddProduct", data: Self.product("p1"))
            #expect(older.handle(add).accepted != nil)
            let restock = CommandRequest(
                commandId: "x", type: "RestockProduct", data: ["productId": "p1", "quantity": 1])
            #expect(newer.handle(restock).accepted != nil)
            let outcomes = older.handle([
                restock, CommandRequest(commandId: "y", type: "AddProduct", data: Self.product("p2")),
            ])
            #expect(outcomes[0].error?.code == .internal, "x's record cannot be read by this build")
            #expect(outcomes[1].accepted != nil, "y has nothing to do with x: \(outcomes[1])")
        }
    }

    @Test(
        "given a recorded id whose stream later got an unreadable event, when retried, then it gets its first outcome")
    func retryAfterNewerEvent() throws {
        try withLog { path in
            let olderStore = try SQLiteEventStore(path: path)
            let newerStore = try SQLiteEventStore(path: path, evolution: Self.newer)
            let add = CommandRequest(commandId: "x", type: "AddProduct", data: Self.product("p1"))
            let first = try #require(Self.handler(olderStore, "a").handle(add).accepted)
            let restock = CommandRequest(
                commandId: "r", type: "RestockProduct", data: ["productId": "p1", "quantity": 1])
            #expect(Self.handler(newerStore, "b").handle(restock).accepted != nil)
            let restarted = Self.handler(olderStore, "c")  // the older worker restarted: an empty cache
            let retried = try #require(restarted.handle(add).accepted)
            #expect(retried.wasRetry)
            #expect(retried.events == first.events)
        }
    }
}
