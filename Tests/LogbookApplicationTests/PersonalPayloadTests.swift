import LogbookApplication
import LogbookCrypto
import LogbookTestSupport
import Testing

/// How the vault seals and opens payloads where their values stand: every byte that is not
/// a personal value is kept, every personal value comes back exactly, and a payload that is
/// not one canonical object is refused when sealed and served as stored when read.
@Suite("Personal data: payloads sealed and opened in place")
struct PersonalPayloadTests {
    private let vault = PersonalDataVault.forTests()

    private static func request(type: String = "UserProfileUpdated", data: String, eventId: String = "e-1")
        -> AppendRequest
    {
        AppendRequest(
            metadata: EventMetadata(commandId: "c1", correlationId: "c1", causationId: "c1"),
            events: [NewEvent(eventId: eventId, stream: "user-u1", type: type, data: data, recordedAt: 0)],
            expectations: [:])
    }

    private static func stored(_ event: NewEvent, position: Int64 = 1) -> RecordedEvent {
        RecordedEvent(
            position: position, eventId: event.eventId, stream: event.stream, version: 1, type: event.type,
            data: event.data, metadata: EventMetadata(commandId: "c1", correlationId: "c1", causationId: "c1"),
            recordedAt: 0)
    }

    /// The sealed form of `data`, and what each way of opening it gives back.
    private func roundTrip(type: String = "UserProfileUpdated", _ data: String) throws -> (
        sealed: String, opened: [String]
    ) {
        let sealed = try #require(try vault.seal([Self.request(type: type, data: data)]).requests.first?.events.first)
        let event = Self.stored(sealed)
        var openedByBytes: [String] = []
        var type = event.type
        var eventId = event.eventId
        var bytes = event.data
        try type.withUTF8 { type in
            try eventId.withUTF8 { eventId in
                try bytes.withUTF8 { bytes in
                    let array = try vault.open(type: type, eventId: eventId, data: bytes, position: 1)
                    openedByBytes.append(array.map { String(decoding: $0, as: UTF8.self) } ?? event.data)
                    openedByBytes.append(
                        try vault.withOpened(type: type, eventId: eventId, data: bytes, position: 1) {
                            String(decoding: $0, as: UTF8.self)
                        })
                }
            }
        }
        return (sealed.data, [try vault.open(event).data] + openedByBytes)
    }

    @Test(
        "every way of opening gives the payload back byte for byte, escapes and all",
        arguments: [
            #"{"userId":"u1","name":"Ann \"Nan\" O\\Lee\n\u0001","email":"ann@example.com"}"#,
            #"{"email":"zoë@exämple.org","name":"李小龍 🐉","userId":"u1"}"#,
            #"{"userId":"u1","name":null,"email":"a@b.c","gender":"other","birthday":"2000-01-01"}"#,
            #"{"userId":"u\"1","name":"x"}"#,
        ])
    func roundTrips(data: String) throws {
        let (sealed, opened) = try roundTrip(data)
        #expect(!sealed.contains("example") && !sealed.contains("Nan") && !sealed.contains("小"))
        #expect(opened == [data, data, data])
    }

    @Test("a null value stays null and unsealed; a payload with no personal value is stored as given")
    func nullsAndNothingPersonal() throws {
        let (sealed, opened) = try roundTrip(#"{"userId":"u1","name":null,"email":null}"#)
        #expect(sealed == #"{"userId":"u1","name":null,"email":null}"#)
        #expect(opened.allSatisfy { $0 == sealed })
        let claim = try roundTrip(type: "EmailClaimed", #"{"userId":"u1","email":"a@b.c","name":"not personal here"}"#)
        #expect(claim.sealed.contains("not personal here"), "only the type's own personal fields are sealed")
        #expect(!claim.sealed.contains("a@b.c"))
    }

    @Test(
        "a personal payload that is not one canonical object with a string userId is refused, not stored in clear",
        arguments: [
            #"{"userId":"u1","name":"Ann",}"#, #"{"userId":"u1","name":"Ann","name":"Bo"}"#,
            #"{"userId":"u1","userId":"u2","name":"Ann"}"#, #"{"name":"Ann"}"#, #"{"userId":7,"name":"Ann"}"#,
            #"{ "userId":"u1","name":"Ann"}"#, #"["u1","Ann"]"#, "",
        ])
    func refusedWhenSealed(data: String) {
        #expect {
            try vault.seal([Self.request(data: data)])
        } throws: { error in
            guard case .invalidRequest(let message)? = error as? EventStoreError else { return false }
            return !message.contains("Ann")
        }
    }

    @Test("a stored payload that holds no sealed value, or is not canonical, is served as stored")
    func servedAsStored() throws {
        for data in [#"{"userId":"u1","name":"Ann"}"#, #"{"userId":"u1","name":{"sealed":"AAAA"},}"#, "{}"] {
            let event = Self.stored(
                NewEvent(eventId: "e", stream: "user-u1", type: "UserRegistered", data: data, recordedAt: 0))
            #expect(try vault.open(event) == event)
        }
    }

    @Test("a sealed value that is not Base64, or too short to be sealed, is an error naming its field")
    func malformedSealedValues() throws {
        for text in ["!!!!", "AAAA", String(repeating: "A", count: 60)] {
            let event = Self.stored(
                NewEvent(
                    eventId: "e", stream: "user-u1", type: "UserRegistered",
                    data: #"{"userId":"u1","name":{"sealed":"\#(text)"}}"#, recordedAt: 0))
            _ = try vault.seal([Self.request(data: #"{"userId":"u1","name":"Ann"}"#)])
            #expect {
                try vault.open(event)
            } throws: { error in
                guard case .unreadableEvent(1, let reason)? = error as? EventStoreError else { return false }
                return reason.contains("name")
            }
        }
    }
}
