import LogbookApplication
import LogbookDomain
import LogbookJSON
import LogbookMemory
import LogbookTestSupport
import Testing

@Suite("Command handler: single commands")
struct CommandHandlerTests {
    @Test("registering a user appends the user and its email claim atomically")
    func register() throws {
        let h = HandlerHarness()
        let outcome = h.send("c1", "RegisterUser", Body.user("u1", email: "Ann@Example.com"))
        let accepted = try #require(outcome.accepted)
        #expect(accepted.events.map(\.type) == ["UserRegistered", "EmailClaimed"])
        let bucket = EmailBucketing.forTests.bucket(of: try EmailAddress("ann@example.com").normalized)
        #expect(accepted.events.map(\.stream) == ["user-u1", "email-\(bucket)"])
        #expect(accepted.position == 2)
        #expect(!accepted.wasRetry)
        let data = try payload(accepted.events[0])
        #expect(data["email"] == "Ann@Example.com")
        #expect(data["gender"] == "unknown")
        #expect(data["subscription"] == "free")
        #expect(accepted.events.allSatisfy { $0.metadata.commandId == "c1" && $0.recordedAt == 1_764_000_000_000 })
        #expect(accepted.events.map(\.eventId) == ["e1", "e2"])
    }

    @Test("correlation and causation default to the command id and can be given")
    func metadata() throws {
        let h = HandlerHarness()
        let given = h.handler.handle(
            CommandRequest(
                commandId: "c1", type: "AddProduct", data: Body.product("p1"), correlationId: "conv-7",
                causationId: "evt-3"))
        #expect(
            given.accepted?.events.first?.metadata
                == EventMetadata(commandId: "c1", correlationId: "conv-7", causationId: "evt-3"))
        let defaulted = h.send("c2", "RestockProduct", ["productId": "p1", "quantity": 1])
        #expect(
            defaulted.accepted?.events.first?.metadata
                == EventMetadata(commandId: "c2", correlationId: "c2", causationId: "c2"))
    }

    @Test("a retried command id returns the first outcome and appends nothing, whatever it carries")
    func retry() throws {
        let h = HandlerHarness()
        let first = try #require(h.send("c1", "AddProduct", Body.product("p1")).accepted)
        let again = try #require(h.send("c1", "AddProduct", Body.product("p1")).accepted)
        #expect(again.events == first.events)
        #expect(again.position == first.position)
        #expect(again.wasRetry)
        let different = try #require(h.send("c1", "RemoveProduct", ["productId": "p1"]).accepted)
        #expect(different.events == first.events)
        #expect(try h.head() == 1)
    }

    @Test("an email is unique among live users, case-insensitively, and freed by delete or change")
    func emailUniqueness() throws {
        let h = HandlerHarness()
        h.send("c1", "RegisterUser", Body.user("u1", email: "ann@example.com"))
        #expect(h.send("c2", "RegisterUser", Body.user("u2", email: "ANN@example.COM")).code == .emailTaken)
        h.send("c3", "UpdateUserProfile", ["userId": "u1", "email": "ann@work.example"])
        #expect(h.send("c4", "RegisterUser", Body.user("u2", email: "ann@example.com")).accepted != nil)
        #expect(h.send("c5", "RegisterUser", Body.user("u3", email: "Ann@Work.example")).code == .emailTaken)
        h.send("c6", "DeleteUser", ["userId": "u1"])
        #expect(h.send("c7", "RegisterUser", Body.user("u3", email: "Ann@Work.example")).accepted != nil)
        #expect(
            try h.types() == [
                "UserRegistered", "EmailClaimed",
                "UserProfileUpdated", "EmailClaimed", "EmailReleased",
                "UserRegistered", "EmailClaimed",
                "UserDeleted", "EmailReleased",
                "UserRegistered", "EmailClaimed",
            ])
    }

    @Test("changing only the case of one's own email keeps the claim")
    func emailCaseChange() throws {
        let h = HandlerHarness()
        h.send("c1", "RegisterUser", Body.user("u1", email: "ann@example.com"))
        let outcome = h.send("c2", "UpdateUserProfile", ["userId": "u1", "email": "Ann@Example.com"])
        #expect(outcome.eventTypes == ["UserProfileUpdated"])
    }

    @Test("a purchase appends ProductPurchased and OrderPlaced together, priced exactly")
    func purchase() throws {
        let h = HandlerHarness()
        h.send("c1", "RegisterUser", Body.user("u1", email: "ann@example.com"))
        h.send("c2", "AddProduct", Body.product("p1", price: "0.10", stock: 5))
        let accepted = try #require(
            h.send("c3", "PurchaseProduct", Body.purchase("o1", user: "u1", product: "p1", quantity: 3)).accepted)
        #expect(accepted.events.map(\.type) == ["ProductPurchased", "OrderPlaced"])
        #expect(accepted.events.map(\.stream) == ["product-p1", "order-o1"])
        let order = try payload(accepted.events[1])
        #expect(order["unitPrice"] == "0.10")
        #expect(order["totalPrice"] == "0.30")
        #expect(order["status"] == "pending")
        #expect(try payload(accepted.events[0])["stock"] == 2)
    }

    @Test("purchases fail cleanly when stock runs out, and append nothing")
    func stockRunsOut() throws {
        let h = HandlerHarness()
        h.send("c1", "RegisterUser", Body.user("u1", email: "ann@example.com"))
        h.send("c2", "AddProduct", Body.product("p1", stock: 2))
        let head = try h.head()
        let tooMany = h.send("c3", "PurchaseProduct", Body.purchase("o1", user: "u1", product: "p1", quantity: 3))
        #expect(tooMany.code == .insufficientStock)
        #expect(tooMany.error?.details.contains { $0.key == "available" && $0.value == .int(2) } == true)
        #expect(try h.head() == head)
        #expect(
            h.send("c4", "PurchaseProduct", Body.purchase("o1", user: "u1", product: "p1", quantity: 2)).accepted != nil
        )
        #expect(
            h.send("c5", "PurchaseProduct", Body.purchase("o2", user: "u1", product: "p1", quantity: 1)).code
                == .productNotAvailable)
        #expect(
            h.send("c6", "PurchaseProduct", Body.purchase("o1", user: "u1", product: "p1", quantity: 1)).code
                == .alreadyExists)
    }

    @Test("a client's expectedVersion is checked against the command's main stream")
    func expectedVersion() throws {
        let h = HandlerHarness()
        h.send("c1", "RegisterUser", Body.user("u1", email: "ann@example.com"))
        let post: JSONValue = ["postId": "p1", "authorId": "u1", "title": "Hello", "content": "First"]
        #expect(h.send("c2", "CreatePost", post, expecting: .noStream).accepted != nil)
        #expect(h.send("c3", "EditPost", ["postId": "p1", "title": "Hi"], expecting: .exactly(1)).accepted != nil)
        let stale = h.send("c4", "EditPost", ["postId": "p1", "title": "Hey"], expecting: .exactly(1))
        #expect(stale.code == .wrongExpectedVersion)
        #expect(stale.error?.details.contains { $0.key == "actual" && $0.value == .int(2) } == true)
        #expect(stale.error?.details.contains { $0.key == "cause" && $0.value == .string("expectedVersion") } == true)
        #expect(h.send("c5", "CreatePost", post, expecting: .noStream).code == .wrongExpectedVersion)
        #expect(try h.types().filter { $0.hasPrefix("Post") } == ["PostCreated", "PostEdited"])
    }

    @Test("a command that changes nothing is accepted with no events at the current head")
    func noOp() throws {
        let h = HandlerHarness()
        h.send("c1", "RegisterUser", Body.user("u1", email: "ann@example.com"))
        let outcome = try #require(
            h.send("c2", "ChangeSubscription", ["userId": "u1", "subscription": "free"]).accepted)
        #expect(outcome.events.isEmpty)
        #expect(outcome.position == 2)
    }

    @Test(
        "bad requests get the right code and name what is wrong",
        arguments: [
            ("Teleport", JSONValue.object(JSONObject()), ErrorCode.unknownType, "Teleport"),
            ("RegisterUser", ["userId": "u1", "name": "Ann"], .invalidInput, "email: is required"),
            ("RegisterUser", ["userId": "u1", "name": "Ann", "email": 7], .invalidInput, "email: must be a string"),
            ("RegisterUser", ["userId": "u 1", "name": "Ann", "email": "a@b.co"], .invalidInput, "userId:"),
            (
                "RegisterUser", ["userId": "u1", "name": "Ann", "email": "a@b.co", "role": "admin"], .invalidInput,
                "role:"
            ),
            (
                "AddProduct",
                ["productId": "p1", "name": "Tea", "price": .double(2.5), "category": "food", "stock": 1],
                .invalidInput, "price: must be a string"
            ),
            (
                "AddProduct", ["productId": "p1", "name": "Tea", "price": "2.5", "category": "toys", "stock": 1],
                .invalidInput, "category: must be one of"
            ),
            (
                "AddProduct", ["productId": "p1", "name": "Tea", "price": "2.5", "category": "food", "stock": -1],
                .invalidInput, "stock:"
            ),
            (
                "RestockProduct", ["productId": "p1", "quantity": .double(1.5)], .invalidInput,
                "quantity: must be a whole number"
            ),
            ("DeleteUser", JSONValue.array([]), .invalidInput, "data: must be an object"),
            ("DeleteUser", JSONValue.null, .invalidInput, "data: must be an object"),
        ] as [(String, JSONValue, ErrorCode, String)])
    func badRequests(type: String, data: JSONValue, code: ErrorCode, message: String) throws {
        let h = HandlerHarness()
        let outcome = h.send("c1", type, data)
        #expect(outcome.code == code)
        #expect(outcome.error?.message.contains(message) == true, "\(outcome.error?.message ?? "no error")")
        #expect(try h.head() == 0)
    }

    @Test("command ids must be 1–128 printable ASCII characters")
    func badCommandIds() throws {
        let h = HandlerHarness()
        for id in ["", String(repeating: "x", count: 129), "a\nb", "a b", "café", "cafe\u{301}"] {
            #expect(h.send(id, "AddProduct", Body.product("p1")).code == .invalidInput)
        }
        #expect(h.send(String(repeating: "x", count: 128), "AddProduct", Body.product("p1")).accepted != nil)
    }
}
