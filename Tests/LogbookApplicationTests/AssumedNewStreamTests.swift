import LogbookApplication
import LogbookDomain
import LogbookJSON
import LogbookMemory
import LogbookTestSupport
import Synchronization
import Testing

/// The streams a command creates are taken as new on the first round unless the handler
/// knows them: not read from the log, and checked by the append's expectation instead.
@Suite("Command handler: streams a command creates")
struct AssumedNewStreamTests {
    @Test("a command creating new streams reads only the streams it does not create")
    func newStreamsAreNotRead() throws {
        let store = ReadCountingStore()
        let h = HandlerHarness(store: store)
        #expect(h.send("c1", "RegisterUser", Body.user("u1", email: "ann@example.com")).accepted != nil)
        #expect(h.send("c2", "AddProduct", Body.product("p1")).accepted != nil)
        let claims = "email-\(EmailBucketing.forTests.bucket(of: try EmailAddress("ann@example.com").normalized))"
        #expect(store.reads == [claims], "the user and the product were taken as new")
        // A purchase reads the (cached) user and product, and does not read its new order.
        #expect(
            h.send("c3", "PurchaseProduct", Body.purchase("o1", user: "u1", product: "p1", quantity: 1)).accepted != nil
        )
        #expect(store.reads == [claims])
        #expect(h.handler.commandsDecidedAgain == 0)
    }

    @Test("a stream the handler did not know already exists: the command is decided again on the log's state")
    func existingStreamIsCaughtByTheExpectation() throws {
        let store = ReadCountingStore()
        let other = HandlerHarness(store: store)
        #expect(other.send("c1", "RegisterUser", Body.user("u1", email: "ann@example.com")).accepted != nil)
        #expect(other.send("c2", "AddProduct", Body.product("p1", stock: 5)).accepted != nil)
        let head = try store.headPosition()
        store.forgetReads()

        // A second worker (its own handler and cache) on the same log.
        let h = HandlerHarness(store: store)
        let again = h.send("c3", "AddProduct", Body.product("p1", stock: 7))
        #expect(again.code == .alreadyExists)
        #expect(h.handler.commandsDecidedAgain == 1, "taken as new, refused by the log, decided on what it holds")
        #expect(store.reads == ["product-p1"], "read once, on the second round")
        #expect(try store.headPosition() == head)
        // What the second round read is cached, and right: the product is live with its stock.
        let restock = h.send("c4", "RestockProduct", ["productId": "p1", "quantity": 1])
        #expect(try payload(try #require(restock.accepted?.events.first))["stock"] == 6)
        #expect(store.reads == ["product-p1"])
        // The user too: a registration of the same id is refused, the id sent again gets its first outcome.
        #expect(h.send("c5", "RegisterUser", Body.user("u1", email: "bo@example.com")).code == .alreadyExists)
        #expect(h.send("c1", "RegisterUser", Body.user("u1", email: "ann@example.com")).accepted?.wasRetry == true)
        #expect(h.handler.commandsDecidedAgain == 2)
    }

    @Test("within a batch, a command reading a stream an earlier command creates builds on it")
    func sameBatch() throws {
        let store = ReadCountingStore()
        let h = HandlerHarness(store: store)
        let outcomes = h.handler.handle([
            CommandRequest(commandId: "a", type: "AddProduct", data: Body.product("p1", stock: 3)),
            CommandRequest(commandId: "b", type: "AddProduct", data: Body.product("p1", stock: 9)),
            CommandRequest(commandId: "c", type: "RestockProduct", data: ["productId": "p1", "quantity": 2]),
        ])
        #expect(outcomes[0].accepted != nil)
        #expect(outcomes[1].code == .alreadyExists)
        #expect(try payload(try #require(outcomes[2].accepted?.events.first))["stock"] == 5)
        #expect(store.reads.isEmpty)
        #expect(h.handler.commandsDecidedAgain == 0)
    }
}

/// An in-memory log that records which streams are read, in order.
final class ReadCountingStore: ForwardingEventStore {
    let inner: any EventStore = InMemoryEventStore()
    private let streamsRead = Mutex<[String]>([])

    var reads: [String] { streamsRead.withLock { $0 } }

    func forgetReads() { streamsRead.withLock { $0 = [] } }

    func append(_ batch: [AppendRequest]) throws(EventStoreError) -> [AppendResult] {
        try inner.append(batch)
    }

    func readStream(_ stream: String, fromVersion: Int, limit: Int) throws(EventStoreError) -> [RecordedEvent] {
        streamsRead.withLock { $0.append(stream) }
        return try inner.readStream(stream, fromVersion: fromVersion, limit: limit)
    }
}
