/// Which fields of which event types are a person's data, and how a payload carries them
/// sealed. A sealed value is the object `{"sealed":"<base64url of nonce and ciphertext>"}`
/// in place of the value, whose plaintext is the value's JSON text exactly as it was, so
/// opening gives back the payload byte for byte. A forgotten value is `null`, and the
/// payload then ends in `"forgotten":true`. Every other byte of the payload is left as it
/// is: the user id, the subscription, the type and the event id stay readable.
///
/// Payloads here are in the form `JSONWriter` writes (`JSONCanonicalForm`); one that is
/// not holds no sealed value (this build never wrote it) and is left alone.
public enum PersonalFields {
    /// The personal fields of each event type that carries any, in no particular order.
    public static let byType: [String: Set<String>] = [
        "UserRegistered": ["name", "email", "gender", "birthday"],
        "UserProfileUpdated": ["name", "email", "gender", "birthday"],
        "EmailClaimed": ["email"],
        "EmailReleased": ["email"],
    ]

    /// The field that names whose key seals an event's personal fields.
    public static let ownerField = "userId"

    /// Each type of `byType` as UTF-8, with its fields: what `fields(ofType:)` compares with.
    private static let typesAsBytes: [(name: [UInt8], fields: PersonalFieldSet)] = byType.map { type, fields in
        (Array(type.utf8), PersonalFieldSet(fields.compactMap(PersonalField.init(key:))))
    }

    /// The personal fields of the type named by the UTF-8 `type`; nil for a type that
    /// carries none (most events, told apart without making a `String`).
    static func fields(ofType type: UnsafeBufferPointer<UInt8>) -> PersonalFieldSet? {
        // Every such type starts with "User" or "Email".
        guard let first = type.first, first == UInt8(ascii: "U") || first == UInt8(ascii: "E") else { return nil }
        for entry in typesAsBytes where entry.name.withUnsafeBufferPointer({ PersonalPayload.equal($0, type) }) {
            return entry.fields
        }
        return nil
    }

    /// The personal fields of the type `type`; nil for a type that carries none.
    static func fields(ofType type: String) -> PersonalFieldSet? {
        var type = type
        return type.withUTF8 { fields(ofType: $0) }
    }

    /// What each sealed value is bound to: the event and the field, as the event id's bytes,
    /// a zero byte and the field's key. A ciphertext moved to another event or another field
    /// does not open. Lent to `body` from memory of its own, no longer than the call.
    static func withAssociatedData<R>(
        eventId: UnsafeBufferPointer<UInt8>, field: PersonalField, _ body: (UnsafeRawBufferPointer) -> R
    ) -> R {
        let key = field.keyBytes
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: eventId.count + 1 + key.count) { bytes in
            var end = bytes.initialize(fromContentsOf: eventId)
            bytes[end] = 0
            end += 1
            for byte in key {
                bytes[end] = byte
                end += 1
            }
            return body(UnsafeRawBufferPointer(bytes))
        }
    }

    static let sealedPrefix: [UInt8] = Array(#"{"sealed":""#.utf8)
    static let sealedSuffix: [UInt8] = Array(#""}"#.utf8)
    /// What a forgotten payload ends in, in place of its closing brace.
    static let forgottenEnding: [UInt8] = Array(#","forgotten":true}"#.utf8)
}
