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
        #expect(LogAudit.violations(in: bad).map(\.problem).contains("u2 and u1 are both live with ann@work.example"))
        let claim = try #require(log.last { $0.type == "EmailClaimed" })
        var doubled = log
        doubled.append(
            RecordedEvent(
                position: Int64(log.count + 1), eventId: "x", stream: claim.stream, version: claim.version + 1,
                type: "EmailClaimed", data: claim.data.replacingOccurrences(of: "u3", with: "u9"),
                metadata: claim.metadata,
                recordedAt: claim.recordedAt))
        #expect(LogAudit.violations(in: doubled).map(\.problem) == ["ann@example.com claimed by u9 while u3 holds it"])
    }

    @Test("unreadable events and events on the wrong stream are reported")
    func unreadable() throws {
        var log = try goodLog()
        log[0].data = "{"
        log[3].stream = "user-zz"
        let problems = LogAudit.violations(in: log).map(\.problem)
        #expect(problems.contains { $0.hasPrefix("unreadable:") })
        #expect(problems.contains { $0.contains("is on stream user-zz") })
    }
}
