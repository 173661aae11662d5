import LogbookApplication
import LogbookDomain
import LogbookJSON
import LogbookMemory
import LogbookTestSupport
import Synchronization
import Testing

/// Another worker committing between a decision's reads and its append: the handler must
/// notice (the store refuses the stale expectation) and decide again on fresh state.
@Suite("Command handler: races with other writers")
struct RaceTests {
    @Test("a write landing between decide and append is caught, and the command is decided again")
    func retriedOnFreshState() throws {
        let (racing, h) = racingShop(stock: 2)
        // Just before our purchase of 2 is appended, someone else buys 1.
        racing.beforeNextAppends(1) { store in
            try buyOne(store, order: "other", version: 1)
        }
        let outcome = h.send("c3", "PurchaseProduct", Body.purchase("o1", user: "u1", product: "p1", quantity: 2))
        #expect(outcome.code == .insufficientStock)
        #expect(outcome.error?.details.contains { $0.key == "available" && $0.value == .int(1) } == true)
        #expect(racing.appendCalls == 4, "register, add, the conflicting round, the fresh round recording the refusal")
        #expect(h.handler.commandsDecidedAgain == 1)
        let buy = h.send("c4", "PurchaseProduct", Body.purchase("o1", user: "u1", product: "p1", quantity: 1))
        #expect(try payload(try #require(buy.accepted?.events.first))["stock"] == 0)
    }

    @Test(
        "after three conflicting rounds the command is refused with wrong_expected_version and nothing of it is appended"
    )
    func givesUpAfterThreeRounds() throws {
        let racing = RacingStore()
        let h = HandlerHarness(store: racing)
        h.send("c1", "AddProduct", Body.product("p1", stock: 100))
        var version = 1
        racing.beforeNextAppends(CommandHandler.maximumAttempts) { store in
            try restockOne(store, version: version)
            version += 1
        }
        let outcome = h.send("c2", "RestockProduct", ["productId": "p1", "quantity": 5])
        #expect(outcome.code == .wrongExpectedVersion)
        #expect(h.handler.commandsDecidedAgain == 2, "decided in three rounds: twice again")
        #expect(outcome.error?.details.contains { $0.key == "cause" && $0.value == .string("contention") } == true)
        #expect(try racing.commandRecord("c2") == nil, "contention is not remembered: the id may be sent again")
        #expect(h.send("c3", "RestockProduct", ["productId": "p1", "quantity": 5]).accepted != nil)
    }

    @Test("a racing registration of the same email in another worker wins; ours is refused as taken")
    func emailRace() throws {
        let racing = RacingStore()
        let h = HandlerHarness(store: racing)
        racing.beforeNextAppends(1) { store in
            let other = HandlerHarness(store: store)
            #expect(other.send("theirs", "RegisterUser", Body.user("u2", email: "ANN@example.com")).accepted != nil)
        }
        #expect(h.send("ours", "RegisterUser", Body.user("u1", email: "ann@example.com")).code == .emailTaken)
        #expect(try h.types() == ["UserRegistered", "EmailClaimed"])
    }
}

/// A log with user u1 and product p1 (with `stock`), behind a store that lets a test race.
private func racingShop(stock: Int) -> (RacingStore, HandlerHarness) {
    let racing = RacingStore()
    let h = HandlerHarness(store: racing)
    h.send("c1", "RegisterUser", Body.user("u1", email: "ann@example.com"))
    h.send("c2", "AddProduct", Body.product("p1", stock: stock))
    return (racing, h)
}

private func buyOne(_ store: any EventStore, order: String, version: Int) throws {
    let data = #"{"productId":"p1","orderId":"\#(order)","userId":"u1","quantity":1,"stock":1}"#
    _ = try store.append([
        AppendRequest(
            metadata: EventMetadata(commandId: "race-\(order)", correlationId: "x", causationId: "x"),
            events: [
                NewEvent(
                    eventId: "race-\(order)", stream: "product-p1", type: "ProductPurchased", data: data, recordedAt: 0)
            ],
            expectations: ["product-p1": .exactly(version)])
    ])
}

private func restockOne(_ store: any EventStore, version: Int) throws {
    let data = #"{"productId":"p1","quantity":1,"stock":\#(100 + version)}"#
    _ = try store.append([
        AppendRequest(
            metadata: EventMetadata(commandId: "race-\(version)", correlationId: "x", causationId: "x"),
            events: [
                NewEvent(
                    eventId: "race-\(version)", stream: "product-p1", type: "ProductRestocked", data: data,
                    recordedAt: 0)
            ],
            expectations: ["product-p1": .exactly(version)])
    ])
}

/// An in-memory log where the test can run another writer's append just before the next
/// appends of the handler under test.
final class RacingStore: ForwardingEventStore {
    let inner: any EventStore = InMemoryEventStore()
    private let state = Mutex<(remaining: Int, race: (@Sendable (any EventStore) throws -> Void)?, calls: Int)>(
        (0, nil, 0))

    /// Runs `race` against the log before each of the next `count` appends.
    func beforeNextAppends(_ count: Int, _ race: @escaping (any EventStore) throws -> Void) {
        nonisolated(unsafe) let race = race
        state.withLock { $0 = (count, { try race($0) }, $0.calls) }
    }

    var appendCalls: Int { state.withLock { $0.calls } }

    func append(_ batch: [AppendRequest]) throws(EventStoreError) -> [AppendResult] {
        let race: (@Sendable (any EventStore) throws -> Void)? = state.withLock { state in
            state.calls += 1
            guard state.remaining > 0 else { return nil }
            state.remaining -= 1
            return state.race
        }
        if let race {
            do { try race(inner) } catch { throw .unavailable("the racing writer failed: \(error)") }
        }
        return try inner.append(batch)
    }
}

@Suite("Command handler: outcomes that lean on uncommitted decisions")
struct ProvisionalOutcomeTests {
    @Test("a refusal decided on an earlier command's staged state is decided again when that command conflicts")
    func refusalOnStagedStateIsRedecided() throws {
        let (racing, h) = racingShop(stock: 1)
        // Before the batch is appended, another worker restocks: the first purchase conflicts.
        racing.beforeNextAppends(1) { store in
            let other = HandlerHarness(store: store)
            #expect(other.send("restock", "RestockProduct", ["productId": "p1", "quantity": 5]).accepted != nil)
        }
        let outcomes = h.handler.handle([
            CommandRequest(
                commandId: "a", type: "PurchaseProduct",
                data: Body.purchase("o1", user: "u1", product: "p1", quantity: 1)),
            CommandRequest(
                commandId: "b", type: "PurchaseProduct",
                data: Body.purchase("o2", user: "u1", product: "p1", quantity: 1)),
        ])
        // In the first round "b" was refused as out of stock on "a"'s staged state; that refusal
        // must not stand, since "a" did not commit then. Decided again, both succeed.
        #expect(outcomes.map(\.code) == [nil, nil])
        let stocks = try outcomes.map { try payload(try #require($0.accepted?.events.first))["stock"] }
        #expect(stocks == [5, 4])
    }

    @Test("a command that changes nothing answers with a position covering the batch before it")
    func unchangedPositionCoversEarlierCommands() throws {
        let h = HandlerHarness()
        let outcomes = h.handler.handle([
            CommandRequest(commandId: "a", type: "RegisterUser", data: Body.user("u1", email: "ann@example.com")),
            CommandRequest(commandId: "b", type: "ChangeSubscription", data: ["userId": "u1", "subscription": "free"]),
        ])
        #expect(outcomes[1].accepted?.events == [])
        #expect(outcomes[1].accepted?.position == 2)
    }

    @Test("a purchase decided on a restock that then conflicts is never committed on phantom stock")
    func noPhantomStock() throws {
        let (racing, h) = racingShop(stock: 1)
        // Another worker sells the last item (one event, as our restock would have been).
        racing.beforeNextAppends(1) { store in
            let other = HandlerHarness(store: store)
            #expect(
                other.send("theirs", "PurchaseProduct", Body.purchase("o9", user: "u1", product: "p1", quantity: 1))
                    .accepted != nil)
        }
        let outcomes = h.handler.handle([
            CommandRequest(commandId: "restock", type: "RestockProduct", data: ["productId": "p1", "quantity": 10]),
            CommandRequest(
                commandId: "buy", type: "PurchaseProduct",
                data: Body.purchase("o1", user: "u1", product: "p1", quantity: 5)),
        ])
        #expect(outcomes.map(\.code) == [nil, nil])
        // Replayed in log order, every stock figure follows from the one before.
        let log = try racing.read(fromPosition: 1, limit: 100, categories: nil)
        #expect(LogAudit.violations(in: log) == [])
        let stock = try payload(try #require(log.last { $0.stream == "product-p1" }))["stock"]
        #expect(stock == 5)
    }
}

@Suite("Command handler: every decision is recorded once")
struct RecordedDecisionTests {
    @Test("a retried no-op returns its first answer and cannot undo a later change")
    func retriedNoOp() throws {
        let h = HandlerHarness()
        h.send("c0", "RegisterUser", Body.user("u1", email: "ann@example.com"))
        #expect(h.send("c1", "ChangeSubscription", ["userId": "u1", "subscription": "free"]).accepted?.events == [])
        #expect(
            h.send("c2", "ChangeSubscription", ["userId": "u1", "subscription": "premium"]).eventTypes == [
                "SubscriptionChanged"
            ])
        let retried = try #require(
            h.send("c1", "ChangeSubscription", ["userId": "u1", "subscription": "free"]).accepted)
        #expect(retried.events.isEmpty)
        #expect(retried.wasRetry)
        #expect(retried.position == 2)
        #expect(try h.types().filter { $0 == "SubscriptionChanged" }.count == 1)
    }

    @Test("a retried refusal returns the first refusal even after the state would allow the command")
    func retriedRefusal() throws {
        let h = HandlerHarness()
        h.send("c0", "RegisterUser", Body.user("u1", email: "ann@example.com"))
        h.send("c1", "AddProduct", Body.product("p1", stock: 0))
        let first = h.send("buy", "PurchaseProduct", Body.purchase("o1", user: "u1", product: "p1", quantity: 1))
        #expect(first.code == .productNotAvailable)
        h.send("c2", "RestockProduct", ["productId": "p1", "quantity": 5])
        let again = h.send("buy", "PurchaseProduct", Body.purchase("o1", user: "u1", product: "p1", quantity: 1))
        #expect(again == first)
        #expect(try h.types().contains("OrderPlaced") == false)
    }

    @Test("a request refused before reading any state is not recorded: fixed, it can be sent again")
    func invalidRequestNotRecorded() throws {
        let h = HandlerHarness()
        #expect(h.send("c1", "AddProduct", Body.product("p1", price: "free")).code == .invalidInput)
        #expect(h.send("c1", "AddProduct", Body.product("p1")).accepted != nil)
    }

    @Test("an update naming no field is refused without being recorded, whether or not its target exists")
    func emptyUpdateNotRecorded() throws {
        let h = HandlerHarness()
        h.send("c0", "RegisterUser", Body.user("u1", email: "ann@example.com"))
        #expect(h.send("x", "UpdateUserProfile", ["userId": "u1"]).code == .invalidInput)
        #expect(
            h.send("x", "UpdateUserProfile", ["userId": "u1", "name": "Annie"]).eventTypes == ["UserProfileUpdated"])
        #expect(h.send("y", "UpdateProduct", ["productId": "ghost"]).code == .invalidInput)
        #expect(h.send("y", "UpdateProduct", ["productId": "ghost", "price": "1.00"]).code == .notFound)
    }

    @Test("inside one batch, a repeat of a request refused as invalid is handled on its own")
    func repeatAfterInvalidInBatch() throws {
        let h = HandlerHarness()
        let outcomes = h.handler.handle([
            CommandRequest(commandId: "c1", type: "AddProduct", data: Body.product("p1", price: "free")),
            CommandRequest(commandId: "c1", type: "AddProduct", data: Body.product("p1")),
            CommandRequest(commandId: "c1", type: "AddProduct", data: Body.product("p1")),
        ])
        #expect(outcomes.map(\.code) == [.invalidInput, nil, nil])
        #expect(outcomes[2].accepted?.wasRetry == true)
        #expect(try h.head() == 1)
    }

    @Test("when the log fails, a no-op in the batch fails too rather than answering position 0")
    func noOpWhenTheLogFails() throws {
        let store = FlakyStore()
        let h = HandlerHarness(store: store)
        h.send("c0", "RegisterUser", Body.user("u1", email: "ann@example.com"))
        store.failAppends(true)
        let outcomes = h.handler.handle([
            CommandRequest(commandId: "a", type: "AddProduct", data: Body.product("p1")),
            CommandRequest(commandId: "b", type: "ChangeSubscription", data: ["userId": "u1", "subscription": "free"]),
        ])
        #expect(outcomes.map(\.code) == [.unavailable, .unavailable])
    }
}
