import LogbookApplication
import LogbookJSON
import Testing

/// Version 1 of every event type, as the log stores it. A change to `EventCodec` that
/// breaks one of these is a new schema version: it needs an upcaster from this shape
/// (see docs/architecture.md, "Changing an event's shape"), not an edit of this table.
@Suite("Event payloads at version 1")
struct EventPayloadVersionOneTests {
    static let payloads: [(type: String, data: String)] = [
        (
            "UserRegistered",
            #"{"userId":"u1","name":"Ann","email":"Ann@Example.com","gender":"female","birthday":"1990-02-28","subscription":"premium"}"#
        ),
        ("UserRegistered", #"{"userId":"u1","name":"Ann","email":"a@b.co","gender":"unknown","subscription":"free"}"#),
        (
            "UserProfileUpdated",
            #"{"userId":"u1","name":"Annie","email":"a@b.co","gender":"other","birthday":"2000-01-01"}"#
        ),
        ("UserProfileUpdated", #"{"userId":"u1","name":"Annie"}"#),
        ("SubscriptionChanged", #"{"userId":"u1","from":"free","to":"enterprise"}"#),
        ("UserDeleted", #"{"userId":"u1"}"#),
        ("EmailClaimed", #"{"email":"ann@example.com","userId":"u1"}"#),
        ("EmailReleased", #"{"email":"ann@example.com","userId":"u1"}"#),
        ("UserForgotten", #"{"userId":"u1"}"#),
        ("PostCreated", #"{"postId":"p1","authorId":"u1","title":"Hello","content":"Line one\nline \"two\""}"#),
        ("PostEdited", #"{"postId":"p1","title":"Hi","content":""}"#),
        ("PostDeleted", #"{"postId":"p1"}"#),
        ("ProductAdded", #"{"productId":"p1","name":"Tea","price":"19.90","category":"food","stock":3}"#),
        ("ProductUpdated", #"{"productId":"p1","name":"Green tea","price":"0.00","category":"clothing"}"#),
        ("ProductRestocked", #"{"productId":"p1","quantity":5,"stock":8}"#),
        ("ProductRemoved", #"{"productId":"p1"}"#),
        ("ProductPurchased", #"{"productId":"p1","orderId":"o1","userId":"u1","quantity":2,"stock":1}"#),
        (
            "OrderPlaced",
            #"{"orderId":"o1","userId":"u1","productId":"p1","quantity":2,"unitPrice":"19.90","totalPrice":"39.80","status":"pending"}"#
        ),
    ]

    @Test("personal types are at version 2, the rest at 1; version 1 payloads read as they are, byte for byte")
    func versionOneShapes() throws {
        #expect(Set(Self.payloads.map(\.type)).count == 16, "one row per event type at least")
        for (type, data) in Self.payloads {
            let personal = PersonalFields.byType[type] != nil
            #expect(EventEvolution.standard.currentVersion(of: type) == (personal ? 2 : 1), "\(type)")
            #expect(try EventEvolution.standard.upcast(type: type, version: 1, data: data) == data, "\(type)")
            let stream = type.hasPrefix("Email") ? "email-3fa2" : "user-u1"
            let event = try EventCodec.decode(type: type, stream: stream, data: data)
            #expect(EventCodec.encodedText(event) == data, "\(type)")
        }
    }
}

/// The schema history of event payloads: given a payload written under some version,
/// when it is read, then it comes back in the current shape (or a clear error).
@Suite("Event evolution (upcasters)")
struct EventEvolutionTests {
    /// A made-up history of one type: version 1 called the name `fullName`; version 2
    /// renamed it to `name`; version 3 added `subscription` with its default.
    private static let history = EventEvolution([
        EventUpcaster(type: "UserRegistered", fromVersion: 2) { payload in
            var upcast = payload
            upcast["subscription"] = .string("free")
            return upcast
        },
        EventUpcaster(type: "UserRegistered", fromVersion: 1) { payload throws(EventUpcastError) in
            guard let name = payload["fullName"] else {
                throw EventUpcastError(type: "UserRegistered", version: 1, reason: "fullName is missing")
            }
            var upcast = JSONObject()
            for (key, value) in payload where key != "fullName" { upcast[key] = value }
            upcast["name"] = name
            return upcast
        },
    ])

    @Test("Logbook's own history: personal types at 2, the rest at 1; current payloads pass through byte for byte")
    func standardIsIdentity() throws {
        for type in ["UserRegistered", "UserProfileUpdated", "EmailClaimed", "EmailReleased"] {
            #expect(EventEvolution.standard.currentVersion(of: type) == 2)
        }
        for type in ["OrderPlaced", "UserForgotten", "SomethingNew"] {
            #expect(EventEvolution.standard.currentVersion(of: type) == 1)
        }
        let stored = #"{ "userId" : "u1",  "name":"Ada" }"#
        #expect(try EventEvolution.standard.upcast(type: "UserRegistered", version: 2, data: stored) == stored)
        #expect(try EventEvolution.standard.upcast(type: "OrderPlaced", version: 1, data: stored) == stored)
        // A version 1 payload of a personal type is the same shape, written back canonically.
        #expect(
            try EventEvolution.standard.upcast(type: "UserRegistered", version: 1, data: stored)
                == #"{"userId":"u1","name":"Ada"}"#)
        var name = Array("UserRegistered".utf8)
        #expect(
            name.withUnsafeMutableBufferPointer {
                EventEvolution.standard.isCurrent(type: UnsafeBufferPointer($0), version: 2)
            })
        #expect(
            !name.withUnsafeMutableBufferPointer {
                EventEvolution.standard.isCurrent(type: UnsafeBufferPointer($0), version: 1)
            })
    }

    @Test("the current version is one more than the number of a type's steps")
    func currentVersions() {
        #expect(Self.history.currentVersion(of: "UserRegistered") == 3)
        #expect(Self.history.currentVersion(of: "PostCreated") == 1)
    }

    @Test("given a version 1 payload, when read, then every later step runs in order")
    func upcastFromTheFirstVersion() throws {
        let read = try Self.history.upcast(
            type: "UserRegistered", version: 1, data: #"{"userId":"u1","fullName":"Ada"}"#)
        #expect(try JSONParser.parse(read) == ["userId": "u1", "name": "Ada", "subscription": "free"])
    }

    @Test("given a version 2 payload, when read, then only the steps after version 2 run")
    func upcastFromTheMiddle() throws {
        let read = try Self.history.upcast(type: "UserRegistered", version: 2, data: #"{"userId":"u1","name":"Ada"}"#)
        #expect(try JSONParser.parse(read) == ["userId": "u1", "name": "Ada", "subscription": "free"])
    }

    @Test("given a current payload, when read, then it is returned untouched")
    func currentIsUntouched() throws {
        let stored = #"{"userId":"u1","fullName":"kept as written"}"#
        #expect(try Self.history.upcast(type: "UserRegistered", version: 3, data: stored) == stored)
        #expect(try Self.history.upcast(type: "PostCreated", version: 1, data: stored) == stored)
    }

    @Test("given a payload from a newer Logbook, when read, then it is refused, naming the versions")
    func newerVersionRefused() {
        #expect {
            try Self.history.upcast(type: "UserRegistered", version: 4, data: "{}")
        } throws: { error in
            guard let error = error as? EventUpcastError else { return false }
            return error.version == 4 && error.description.contains("knows versions up to 3")
        }
        #expect(throws: EventUpcastError.self) { try EventEvolution.standard.upcast(type: "X", version: 2, data: "{}") }
        #expect(throws: EventUpcastError.self) {
            try Self.history.upcast(type: "UserRegistered", version: 0, data: "{}")
        }
    }

    @Test("given a payload its version's step cannot read, when read, then the step's error comes back")
    func stepErrorsSurface() {
        #expect(throws: EventUpcastError(type: "UserRegistered", version: 1, reason: "fullName is missing")) {
            try Self.history.upcast(type: "UserRegistered", version: 1, data: #"{"userId":"u1"}"#)
        }
        #expect(throws: EventUpcastError.self) {
            try Self.history.upcast(type: "UserRegistered", version: 1, data: "[1]")
        }
        #expect(throws: EventUpcastError.self) {
            try Self.history.upcast(type: "UserRegistered", version: 1, data: "{")
        }
    }
}
