import LogbookApplication
import LogbookDomain
import LogbookJSON
import LogbookMemory
import LogbookTestSupport
import Synchronization
import Testing

@Suite("Command handler: batches and concurrency")
struct BatchTests {
    @Test("a batch is decided in arrival order, each command against what the earlier ones left")
    func arrivalOrder() throws {
        let h = HandlerHarness()
        let outcomes = h.handler.handle([
            CommandRequest(commandId: "c1", type: "RegisterUser", data: Body.user("u1", email: "ann@example.com")),
            CommandRequest(commandId: "c2", type: "RegisterUser", data: Body.user("u2", email: "ANN@example.com")),
            CommandRequest(commandId: "c3", type: "AddProduct", data: Body.product("p1", stock: 1)),
            CommandRequest(
                commandId: "c4", type: "PurchaseProduct",
                data: Body.purchase("o1", user: "u1", product: "p1", quantity: 1)),
            CommandRequest(
                commandId: "c5", type: "PurchaseProduct",
                data: Body.purchase("o2", user: "u1", product: "p1", quantity: 1)),
            CommandRequest(commandId: "c6", type: "Nonsense", data: [:]),
            CommandRequest(commandId: "c7", type: "RestockProduct", data: ["productId": "p1", "quantity": 4]),
        ])
        #expect(outcomes.map(\.code) == [nil, .emailTaken, nil, nil, .productNotAvailable, .unknownType, nil])
        let positions = outcomes.compactMap { $0.accepted?.events.map(\.position) }.flatMap { $0 }
        #expect(positions == Array(1...6))
        #expect(try payload(try #require(outcomes[6].accepted?.events.first))["stock"] == 4)
    }

    @Test("a command id repeated inside one batch is handled once")
    func repeatedIdInBatch() throws {
        let h = HandlerHarness()
        let request = CommandRequest(commandId: "c1", type: "AddProduct", data: Body.product("p1"))
        let outcomes = h.handler.handle([request, request])
        #expect(outcomes[0].accepted?.events == outcomes[1].accepted?.events)
        #expect(outcomes[1].accepted?.wasRetry == true)
        #expect(try h.head() == 1)
    }

    @Test("two handlers on one log (two workers) never sell stock twice")
    func twoWorkers() throws {
        let store = InMemoryEventStore()
        let a = HandlerHarness(store: store)
        let b = HandlerHarness(store: store)
        a.send("c1", "RegisterUser", Body.user("u1", email: "ann@example.com"))
        a.send("c2", "AddProduct", Body.product("p1", stock: 3))
        // Both workers now cache the product; each sells from its own view.
        #expect(
            a.send("c3", "PurchaseProduct", Body.purchase("o1", user: "u1", product: "p1", quantity: 1)).accepted != nil
        )
        #expect(
            b.send("c4", "PurchaseProduct", Body.purchase("o2", user: "u1", product: "p1", quantity: 1)).accepted != nil
        )
        // `a` cached stock 2, but the log says 1: `a` catches up before deciding, and refuses.
        #expect(
            a.send("c5", "PurchaseProduct", Body.purchase("o3", user: "u1", product: "p1", quantity: 2)).code
                == .insufficientStock)
        let last = a.send("c6", "PurchaseProduct", Body.purchase("o3", user: "u1", product: "p1", quantity: 1))
        #expect(try payload(try #require(last.accepted?.events.first))["stock"] == 0)
        // A client's expectation is judged on the log as it is, not on what this worker saw last.
        #expect(
            b.send("c7", "RestockProduct", ["productId": "p1", "quantity": 1], expecting: .exactly(4)).accepted != nil)
    }

    @Test("when the log fails, every command of the batch gets `unavailable` and the handler goes on")
    func storeFailure() throws {
        let store = FlakyStore()
        let h = HandlerHarness(store: store)
        h.send("c1", "AddProduct", Body.product("p1"))
        store.failAppends(true)
        let outcomes = h.handler.handle([
            CommandRequest(commandId: "c2", type: "RestockProduct", data: ["productId": "p1", "quantity": 1]),
            CommandRequest(commandId: "c3", type: "AddProduct", data: Body.product("p2")),
        ])
        #expect(outcomes.map(\.code) == [.unavailable, .unavailable])
        store.failAppends(false)
        let retried = try #require(h.send("c2", "RestockProduct", ["productId": "p1", "quantity": 1]).accepted)
        #expect(try payload(retried.events[0])["stock"] == 11)
        #expect(try h.head() == 2)
    }

    @Test("an unreadable event in a stream fails only the commands that read that stream")
    func unreadableEvent() throws {
        let store = InMemoryEventStore()
        _ = try store.append([
            AppendRequest(
                metadata: EventMetadata(commandId: "x", correlationId: "x", causationId: "x"),
                events: [
                    NewEvent(eventId: "x", stream: "product-p1", type: "ProductAdded", data: "{not json", recordedAt: 0)
                ],
                expectations: [:])
        ])
        let h = HandlerHarness(store: store)
        let broken = h.send("c1", "RestockProduct", ["productId": "p1", "quantity": 1])
        #expect(broken.code == .internal)
        #expect(broken.error?.message.contains("unreadable") == true)
        #expect(h.send("c2", "AddProduct", Body.product("p2")).accepted != nil)
    }

    @Test("a small cache evicts but never changes an outcome")
    func smallCache() throws {
        let h = HandlerHarness(cacheCapacity: 2)
        for n in 1...6 { h.send("a\(n)", "AddProduct", Body.product("p\(n)", stock: 1)) }
        for n in 1...6 { h.send("r\(n)", "RestockProduct", ["productId": .string("p\(n)"), "quantity": 2]) }
        for n in 1...6 {
            let outcome = h.send("s\(n)", "RestockProduct", ["productId": .string("p\(n)"), "quantity": 3])
            #expect(try payload(try #require(outcome.accepted?.events.first))["stock"] == 6)
        }
    }
}

/// An in-memory store whose appends can be made to fail, as a full disk would.
final class FlakyStore: ForwardingEventStore {
    let inner: any EventStore = InMemoryEventStore()
    private let failing = Mutex(false)

    func failAppends(_ fail: Bool) { failing.withLock { $0 = fail } }

    func append(_ batch: [AppendRequest]) throws(EventStoreError) -> [AppendResult] {
        if failing.withLock({ $0 }) { throw .unavailable("disk full") }
        return try inner.append(batch)
    }
}
