import LogbookApplication
import LogbookDomain
import LogbookJSON
import LogbookMemory
import Testing

/// A batch decided while the one before is in flight (`CommandHandler.decide`, `send`,
/// `land`), over a store that appends only when the results are taken, so that another
/// writer can commit in between, as beside a PostgreSQL server.
@Suite("Command handler: a batch decided while the one before is appended")
struct DecidedAheadTests {
    /// A store that sends ahead, with product p1 (stock 10) and user u1; and a second handler
    /// on it, another worker.
    static func given() -> (h: HandlerHarness, other: HandlerHarness) {
        let store = InMemoryEventStore(sendsAhead: true)
        let h = HandlerHarness(store: store)
        h.send("setup-1", "AddProduct", Body.product("p1", stock: 10))
        h.send("setup-2", "RegisterUser", Body.user("u1", email: "ann@example.com"))
        return (h, HandlerHarness(store: store))
    }

    static func purchase(_ id: String, order: String, quantity: Int) -> CommandRequest {
        CommandRequest(
            commandId: id, type: "PurchaseProduct",
            data: Body.purchase(order, user: "u1", product: "p1", quantity: quantity))
    }

    @Test("a batch decided while another is in flight builds on what that one appends")
    func buildsOnTheBatchInFlight() throws {
        let (h, _) = Self.given()
        #expect(h.handler.sendsAhead)
        // Given a purchase of 4 in flight
        h.handler.send(h.handler.decide([Self.purchase("k1", order: "o1", quantity: 4)]))
        #expect(h.handler.hasBatchInFlight)
        // When the next batch is decided meanwhile: 5 more, then 2 more
        let next = h.handler.decide([
            Self.purchase("n1", order: "o2", quantity: 5), Self.purchase("n2", order: "o3", quantity: 2),
        ])
        let first = h.handler.land()
        h.handler.send(next)
        let second = h.handler.land()
        // Then the next batch saw the 4 taken: 5 fit, 2 more do not
        #expect(first.map(\.eventTypes) == [["ProductPurchased", "OrderPlaced"]])
        #expect(second[0].eventTypes == ["ProductPurchased", "OrderPlaced"])
        #expect(second[1].code == .insufficientStock)
        #expect(h.handler.commandsDecidedAgain == 0)
        #expect(try h.types().filter { $0 == "ProductPurchased" }.count == 2)
    }

    @Test("a decision built on a command in flight that did not commit is decided again on what did")
    func droppedWhenItsBasisFails() throws {
        let (h, other) = Self.given()
        // Given a purchase of 4 in flight, decided on stock 10 at p1's version 1
        h.handler.send(h.handler.decide([Self.purchase("k1", order: "o1", quantity: 4)]))
        // And a purchase of 6 decided meanwhile on the stock it leaves (6, p1 at version 2)
        let next = h.handler.decide([Self.purchase("n1", order: "o2", quantity: 6)])
        // When another worker buys 8 first: p1 is at version 2 with 2 left, so the purchase
        // of 6 expects the version p1 has, on a state p1 never had
        let rival = other.send("w1", "PurchaseProduct", Body.purchase("o9", user: "u1", product: "p1", quantity: 8))
        #expect(rival.accepted != nil)
        let first = h.handler.land()
        h.handler.send(next)
        let second = h.handler.land()
        // Then the purchase of 4 met the conflict and was decided again (2 left: refused, p1
        // stays at version 2), and the purchase of 6 was decided again on what committed
        #expect(first[0].code == .insufficientStock)
        #expect(second[0].code == .insufficientStock)
        #expect(h.handler.commandsDecidedAgain == 2)
        let sold = try h.store.readWholeStream("product-p1").filter { $0.type == "ProductPurchased" }
        #expect(sold.count == 1, "never more sold than the stock held")
    }

    @Test("a stream a dropped decision touched is read afresh, even when a kept one wrote it")
    func forgottenStreamsLeaveTheCache() throws {
        // Given p2 cached at its first version, and a purchase of p1 by u1 in flight
        let (h, other) = Self.given()
        h.send("setup-3", "AddProduct", Body.product("p2", stock: 10))
        h.handler.send(h.handler.decide([Self.purchase("k1", order: "o1", quantity: 1)]))
        // And, decided meanwhile, a restock of p2, then u1's purchase of p2 after it
        let next = h.handler.decide([
            CommandRequest(commandId: "n1", type: "RestockProduct", data: ["productId": "p2", "quantity": 5]),
            CommandRequest(
                commandId: "n2", type: "PurchaseProduct",
                data: Body.purchase("o2", user: "u1", product: "p2", quantity: 1)),
        ])
        // When another worker buys p1 first, so that the purchase in flight conflicts
        #expect(
            other.send("w1", "PurchaseProduct", Body.purchase("o9", user: "u1", product: "p1", quantity: 1)).accepted
                != nil)
        _ = h.handler.land()
        h.handler.send(next)
        let outcomes = h.handler.land()
        // Then u1's purchase of p2 was dropped (it touched u1's stream) and decided again on
        // the p2 the restock left, read from the log, not on the p2 cached before it
        #expect(outcomes.map(\.eventTypes) == [["ProductRestocked"], ["ProductPurchased", "OrderPlaced"]])
        #expect(h.handler.commandsDecidedAgain == 2, "k1 after its conflict, n2 after its drop: no more")
    }

    @Test("commands that join a decided batch are decided on what its earlier ones and the batch in flight leave")
    func joined() throws {
        let (h, _) = Self.given()
        // Given a purchase of 4 in flight, and a purchase of 5 decided meanwhile
        h.handler.send(h.handler.decide([Self.purchase("k1", order: "o1", quantity: 4)]))
        var next = h.handler.decide([Self.purchase("n1", order: "o2", quantity: 5)])
        // When two more join that batch before it is sent, one of them a repeat of n1
        h.handler.decide(
            [Self.purchase("n2", order: "o3", quantity: 2), Self.purchase("n1", order: "o2", quantity: 5)],
            into: &next)
        #expect(next.count == 3)
        _ = h.handler.land()
        h.handler.send(next)
        let outcomes = h.handler.land()
        // Then the last purchase saw 1 left; the repeat has its original's outcome, as a retry
        #expect(outcomes[0].eventTypes == ["ProductPurchased", "OrderPlaced"])
        #expect(outcomes[1].code == .insufficientStock)
        #expect(outcomes[2].accepted?.wasRetry == true)
        #expect(outcomes[2].accepted?.events == outcomes[0].accepted?.events)
    }

    @Test("a batch with nothing in flight is decided on the log alone, and handle is decide, send and land")
    func nothingInFlight() throws {
        let (h, _) = Self.given()
        let outcomes = h.handler.handle([Self.purchase("k1", order: "o1", quantity: 4)])
        #expect(!h.handler.hasBatchInFlight)
        #expect(outcomes[0].eventTypes == ["ProductPurchased", "OrderPlaced"])
        let decided = h.handler.decide([Self.purchase("k2", order: "o2", quantity: 6)])
        h.handler.send(decided)
        #expect(h.handler.land()[0].eventTypes == ["ProductPurchased", "OrderPlaced"])
    }
}
