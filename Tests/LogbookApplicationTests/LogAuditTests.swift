import Foundation
import LogbookApplication
import LogbookDomain
import LogbookJSON
import LogbookMemory
import Testing

@Suite("Log audit")
struct LogAuditTests {
    /// A well-formed log the handler wrote: users, an email change, products, purchases, a deletion.
    private func goodLog() throws -> [RecordedEvent] {
        let h = HandlerHarness()
        h.send("c1", "RegisterUser", Body.user("u1", email: "ann@example.com"))
        h.send("c2", "UpdateUserProfile", ["userId": "u1", "email": "ann@work.example"])
        h.send("c3", "RegisterUser", Body.user("u2", email: "ann@example.com"))
        h.send("c4", "AddProduct", Body.product("p1", price: "0.10", stock: 3))
        h.send("c5", "PurchaseProduct", Body.purchase("o1", user: "u1", product: "p1", quantity: 3))
        h.send("c6", "RestockProduct", ["productId": "p1", "quantity": 2])
        h.send("c7", "DeleteUser", ["userId": "u2"])
        h.send("c8", "RegisterUser", Body.user("u3", email: "ANN@example.com"))
        return try h.store.read(fromPosition: 1, limit: 100, categories: nil)
    }

    @Test("a log written by the service has no violations")
    func goodLogPasses() throws {
        let log = try goodLog()
        #expect(log.count == 15)
        #expect(LogAudit.violations(in: log) == [])
    }

    /// Replaces the payload of the event at `position` by applying `edit` to it.
    private func tampered(_ log: [RecordedEvent], at position: Int64, _ edit: (inout JSONObject) -> Void) throws
        -> [RecordedEvent]
    {
        var log = log
        let index = Int(position - 1)
        var data = try #require(try JSONParser.parse(log[index].data).objectValue)
        edit(&data)
        log[index].data = JSONWriter.string(.object(data))
        return log
    }

    @Test("holes and repeats in positions or versions are reported")
    func holes() throws {
        var log = try goodLog()
        log.remove(at: 3)
        let violations = LogAudit.violations(in: log)
        #expect(violations.first == .init(position: 5, problem: "expected position 4, found 5"))
        var skipped = try goodLog()
        skipped[2].version = 3  // user-u1's second event
        #expect(LogAudit.violations(in: skipped).contains { $0.problem.contains("expected version 2, found 3") })
    }

    @Test("stock that does not follow from the figure before is reported")
    func stockJump() throws {
        let log = try goodLog()
        let purchase = try #require(log.first { $0.type == "ProductPurchased" })
        let bad = try tampered(log, at: purchase.position) { $0["stock"] = 1 }
        #expect(LogAudit.violations(in: bad).map(\.problem).contains("p1 sold 3 from 3, leaving 1"))
        let restock = try #require(log.first { $0.type == "ProductRestocked" })
        let badRestock = try tampered(log, at: restock.position) { $0["stock"] = 7 }
        #expect(LogAudit.violations(in: badRestock).map(\.problem).contains("p1 restocked 2 from 0 to 7"))
    }

    @Test("an order total that is not exactly price × quantity is reported")
    func wrongTotal() throws {
        let log = try goodLog()
        let order = try #require(log.first { $0.type == "OrderPlaced" })
        let bad = try tampered(log, at: order.position) { $0["totalPrice"] = "0.31" }
        #expect(LogAudit.violations(in: bad).map(\.problem) == ["order o1 totals 0.31 for 3 × 0.10"])
    }

    @Test("two live users with one address, and claims out of turn, are reported")
    func emails() throws {
        let log = try goodLog()
        let thirdRegistration = try #require(log.first { $0.type == "UserRegistered" && $0.stream == "user-u2" })
        // u2 registers with u1's current address.
        let bad = try tampered(log, at: thirdRegistration.position) { $0["email"] = "ann@work.example" }
        #expect(LogAudit.violations(in: bad).map(\.problem).contains("u2 and u1 are both live with one email address"))
        let claim = try #require(log.last { $0.type == "EmailClaimed" })
        var doubled = log
        doubled.append(
            RecordedEvent(
                position: Int64(log.count + 1), eventId: "x", stream: claim.stream, version: claim.version + 1,
                type: "EmailClaimed", data: claim.data.replacingOccurrences(of: "u3", with: "u9"),
                metadata: claim.metadata,
                recordedAt: claim.recordedAt))
        let bucket = claim.stream.dropFirst("email-".count)
        #expect(
            LogAudit.violations(in: doubled).map(\.problem) == [
                "an address of bucket \(bucket) is claimed by u9 while u3 holds it"
            ])
    }

    @Test("unreadable events and events on the wrong stream are reported")
    func unreadable() throws {
        var log = try goodLog()
        log[0].data = "{"
        log[2].stream = "user-zz"
        let problems = LogAudit.violations(in: log).map(\.problem)
        #expect(problems.contains { $0.hasPrefix("unreadable:") })
        #expect(problems.contains { $0.contains("is on stream user-zz") })
    }

    /// Appends an event straight to the log, bypassing the deciders, as a bug or a hand edit would.
    private func forge(_ store: InMemoryEventStore, _ id: String, _ stream: String, _ type: String, _ data: String)
        throws
    {
        _ = try store.append([
            AppendRequest(
                metadata: EventMetadata(commandId: id, correlationId: id, causationId: id),
                events: [NewEvent(eventId: id, stream: stream, type: type, data: data, recordedAt: 0)],
                expectations: [:])
        ])
    }

    @Test("what the service never writes is reported: orders without purchases, reused ids, ghosts")
    func lifecycleAndPairing() throws {
        let store = InMemoryEventStore()
        let h = HandlerHarness(store: store)
        h.send("c1", "RegisterUser", Body.user("u1", email: "ann@example.com"))
        h.send("c2", "AddProduct", Body.product("p1", price: "2.50", stock: 3))
        h.send("c3", "PurchaseProduct", Body.purchase("o1", user: "u1", product: "p1", quantity: 1))
        #expect(LogAudit.violations(in: try store.read(fromPosition: 1, limit: 100, categories: nil)) == [])
        let order =
            #"{"orderId":"o1","userId":"u1","productId":"p1","quantity":1,"unitPrice":"2.50","totalPrice":"2.50","status":"pending"}"#
        try forge(store, "x1", "order-o1", "OrderPlaced", order)
        try forge(
            store, "x2", "order-o2", "OrderPlaced",
            #"{"orderId":"o2","userId":"ghost","productId":"p1","quantity":5,"unitPrice":"0.01","totalPrice":"0.05","status":"pending"}"#
        )
        try forge(
            store, "x3", "product-p1", "ProductPurchased",
            #"{"productId":"p1","orderId":"o9","userId":"u1","quantity":1,"stock":1}"#)
        try forge(
            store, "x4", "product-p1", "ProductAdded",
            #"{"productId":"p1","name":"Tea","price":"2.50","category":"food","stock":1000}"#)
        try forge(
            store, "x5", "post-q1", "PostCreated", #"{"postId":"q1","authorId":"ghost","title":"T","content":"C"}"#)
        try forge(
            store, "x6", "user-u1", "UserRegistered",
            #"{"userId":"u1","name":"Ann","email":"b@c.de","gender":"unknown","subscription":"free"}"#)
        let problems = LogAudit.violations(in: try store.read(fromPosition: 1, limit: 100, categories: nil)).map(
            \.problem)
        #expect(
            problems == [
                "order o1 has no purchase just before it",
                "order o1 is placed twice",
                "order o2 has no purchase just before it",
                "purchase for order o9 is followed by position 9, not its order",
                "product p1 is added twice",
                "post q1 is written by ghost, who is not live",
                "user u1 is registered twice",
            ])
    }

    @Test("a purchase at the end of the log, or with a mismatched order, is reported")
    func unmatchedPurchase() throws {
        let store = InMemoryEventStore()
        let h = HandlerHarness(store: store)
        h.send("c1", "RegisterUser", Body.user("u1", email: "ann@example.com"))
        h.send("c2", "AddProduct", Body.product("p1", price: "2.50", stock: 3))
        try forge(
            store, "x1", "product-p1", "ProductPurchased",
            #"{"productId":"p1","orderId":"o1","userId":"u1","quantity":1,"stock":2}"#)
        let dangling = LogAudit.violations(in: try store.read(fromPosition: 1, limit: 100, categories: nil))
        #expect(dangling.map(\.problem) == ["purchase for order o1 is followed by the end of the log, not its order"])
        // The same purchase followed by an order of another command, quantity and price.
        try forge(
            store, "x2", "order-o1", "OrderPlaced",
            #"{"orderId":"o1","userId":"u1","productId":"p1","quantity":2,"unitPrice":"1.00","totalPrice":"2.00","status":"pending"}"#
        )
        let mismatched = LogAudit.violations(in: try store.read(fromPosition: 1, limit: 100, categories: nil)).map(
            \.problem)
        #expect(
            mismatched == [
                "order o1 does not match the purchase at position 4", "order o1 is priced 1.00, the product costs 2.50",
            ])
    }

    @Test("positions and versions at the largest values are reported, not crashed on")
    func extremes() {
        let metadata = EventMetadata(commandId: "c", correlationId: "c", causationId: "c")
        let events = [
            RecordedEvent(
                position: .max, eventId: "e1", stream: "product-p1", version: .max, type: "ProductRemoved",
                data: #"{"productId":"p1"}"#, metadata: metadata, recordedAt: 0),
            RecordedEvent(
                position: 2, eventId: "e2", stream: "product-p1", version: 1, type: "ProductRemoved",
                data: #"{"productId":"p1"}"#, metadata: metadata, recordedAt: 0),
        ]
        var audit = LogAudit()
        for event in events { audit.check(event) }
        audit.finish()
        #expect(audit.violations.map(\.problem).contains("the position is at the largest possible value"))
        #expect(audit.violations.map(\.problem).contains("product-p1 expected version beyond \(Int.max), found 1"))
        #expect(audit.violationCount == audit.violations.count)
    }
}
