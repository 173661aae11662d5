import LogbookApplication
import LogbookDomain
import LogbookJSON
import LogbookTestSupport
import Testing

@Suite("Event codec")
struct EventCodecTests {
    @Test("every event type survives encoding and decoding", arguments: SampleEvents.all)
    func roundTrip(event: DomainEvent) throws {
        let text = EventCodec.encodedText(event)
        #expect(try EventCodec.decode(type: event.typeName, stream: event.stream.name, data: text) == event)
    }

    @Test("payloads use the contract's field names and money as decimal strings")
    func payloadShape() throws {
        let placed = EventCodec.encodedText(SampleEvents.all[16])
        #expect(
            placed
                == #"{"orderId":"o1","userId":"u1","productId":"p1","quantity":3,"unitPrice":"0.10","totalPrice":"0.30","status":"pending"}"#
        )
        let added = EventCodec.encodedText(SampleEvents.all[11])
        #expect(added == #"{"productId":"p1","name":"Tea","price":"19.90","category":"food","stock":0}"#)
        let registered = EventCodec.encodedText(SampleEvents.all[1])
        #expect(!registered.contains("birthday"), "an absent optional field is left out, not null")
    }

    @Test("an email claim is read from a bucket stream, and refused anywhere else")
    func claimsBelongOnBuckets() throws {
        let data = #"{"email":"ann@example.com","userId":"u1"}"#
        let claim = try EventCodec.decode(type: "EmailClaimed", stream: "email-3fa2", data: data)
        #expect(claim.stream.name == "email-3fa2")
        #expect(throws: EventDecodingError.self) {
            try EventCodec.decode(type: "EmailClaimed", stream: "email-ann@example.com", data: data)
        }
    }

    @Test("payloads whose personal values were forgotten decode as erased, keeping their user")
    func forgottenPayloads() throws {
        let registered =
            #"{"userId":"u1","name":null,"email":null,"gender":null,"subscription":"free","forgotten":true}"#
        #expect(
            try EventCodec.decode(type: "UserRegistered", stream: "user-u1", data: registered)
                == .user(.erased(ErasedUserEvent(userId: try UserId("u1"), typeName: "UserRegistered"))))
        let updated = #"{"userId":"u1","email":null,"forgotten":true}"#
        #expect(
            try EventCodec.decode(type: "UserProfileUpdated", stream: "user-u1", data: updated)
                == .user(.erased(ErasedUserEvent(userId: try UserId("u1"), typeName: "UserProfileUpdated"))))
        let claim = #"{"email":null,"userId":"u1","forgotten":true}"#
        let decoded = try EventCodec.decode(type: "EmailReleased", stream: "email-3fa2", data: claim)
        #expect(
            decoded
                == .emailClaim(
                    .forgotten(
                        ForgottenEmailClaim(
                            bucket: try EmailBucket("3fa2"), userId: try UserId("u1"), typeName: "EmailReleased"))))
        #expect(decoded.typeName == "EmailReleased")
        // Without the mark, a registration without its values is an unreadable payload.
        #expect(throws: EventDecodingError.self) {
            try EventCodec.decode(
                type: "UserRegistered", stream: "user-u1",
                data: #"{"userId":"u1","name":null,"email":null,"gender":null,"subscription":"free"}"#)
        }
    }

    @Test("unreadable stored events are reported, not crashed on")
    func unreadable() {
        #expect(throws: EventDecodingError.self) {
            try EventCodec.decode(type: "ProductAdded", stream: "product-p1", data: "{")
        }
        #expect(throws: EventDecodingError.self) {
            try EventCodec.decode(type: "ProductAdded", stream: "product-p1", data: #"{"productId":"p1"}"#)
        }
        #expect(throws: EventDecodingError.self) {
            try EventCodec.decode(type: "Mystery", stream: "product-p1", data: "{}")
        }
        #expect(throws: EventDecodingError.self) {
            try EventCodec.decode(
                type: "ProductRestocked", stream: "product-p1", data: #"{"productId":"p1","quantity":1,"stock":-1}"#)
        }
    }
}

@Suite("Event codec at the limits")
struct EventCodecLimitTests {
    @Test("events holding the largest values accepted read back unchanged")
    func extremes() throws {
        let u1 = try UserId(String(repeating: "u", count: 64))
        let p1 = try ProductId("p1")
        let events: [DomainEvent] = [
            .user(
                .registered(
                    UserRegistered(
                        userId: u1, name: try PersonName(String(repeating: "é", count: 100)),
                        email: try EmailAddress(String(repeating: "a", count: 64) + "@example.com"), gender: .other,
                        birthday: try Birthday(recorded: "1900-01-01"), subscription: .enterprise))),
            .post(
                .created(
                    PostCreated(
                        postId: try PostId("x"), authorId: u1, title: try PostTitle(String(repeating: "t", count: 200)),
                        content: try PostContent(String(repeating: "✓", count: 50_000))))),
            .product(
                .added(
                    ProductAdded(
                        productId: p1, name: try ProductName("Gold"), price: try Money("999999999.99"),
                        category: .electronics, stock: try Stock(Stock.maximum)))),
            .order(
                .placed(
                    OrderPlaced(
                        orderId: try OrderId("o1"), userId: u1, productId: p1, quantity: try Quantity(2),
                        unitPrice: try Money("999999999.99"),
                        totalPrice: try Money("999999999.99").multiplied(by: Quantity(2)),
                        status: .pending))),
        ]
        for event in events {
            #expect(
                try EventCodec.decode(
                    type: event.typeName, stream: event.stream.name, data: EventCodec.encodedText(event)) == event)
        }
    }

    @Test("a purchase whose total exceeds the largest price is recorded and read back by later commands")
    func largeTotalsReadBack() throws {
        let h = HandlerHarness()
        h.send("c1", "RegisterUser", Body.user("u1", email: "ann@example.com"))
        h.send("c2", "AddProduct", Body.product("p1", price: "999999999.99", stock: 5))
        let bought = try #require(
            h.send("c3", "PurchaseProduct", Body.purchase("o1", user: "u1", product: "p1", quantity: 2)).accepted)
        #expect(try payload(bought.events[1])["totalPrice"] == "1999999999.98")
        // Reading order-o1 again (a retry with a new id for the same order) must not choke on the total.
        #expect(
            h.send("c4", "PurchaseProduct", Body.purchase("o1", user: "u1", product: "p1", quantity: 1)).code
                == .alreadyExists)
    }
}
