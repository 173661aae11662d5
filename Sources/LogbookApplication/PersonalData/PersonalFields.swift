import LogbookJSON

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
    private static let typesAsBytes: [(name: [UInt8], fields: Set<String>)] = byType.map {
        (Array($0.key.utf8), $0.value)
    }

    /// The personal fields of the type named by the UTF-8 `type`; nil for a type that
    /// carries none (most events, told apart without making a `String`).
    public static func fields(ofType type: UnsafeBufferPointer<UInt8>) -> Set<String>? {
        // Every such type starts with "User" or "Email".
        guard let first = type.first, first == UInt8(ascii: "U") || first == UInt8(ascii: "E") else { return nil }
        for entry in typesAsBytes where entry.name.count == type.count && entry.name.elementsEqual(type) {
            return entry.fields
        }
        return nil
    }

    /// What each sealed value is bound to: the event and the field. A ciphertext moved to
    /// another event or another field does not open.
    public static func associatedData(eventId: String, field: String) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(eventId.utf8.count + 1 + field.utf8.count)
        bytes.append(contentsOf: eventId.utf8)
        bytes.append(0)
        bytes.append(contentsOf: field.utf8)
        return bytes
    }

    /// One top-level member of a payload: its key and where its value lies in the bytes.
    public struct Member {
        public var key: String
        public var value: Range<Int>
    }

    /// The top-level members of a canonical JSON object, in order; nil when `bytes` is not
    /// one canonical object.
    public static func members(of bytes: UnsafeBufferPointer<UInt8>) -> [Member]? {
        guard bytes.first == UInt8(ascii: "{"), bytes.last == UInt8(ascii: "}"), bytes.count >= 2 else { return nil }
        var members: [Member] = []
        var index = 1
        if bytes.count == 2 { return members }
        while index < bytes.count - 1 {
            guard let (key, keyEnd) = JSONCanonicalForm.string(in: bytes, from: index), keyEnd < bytes.count,
                bytes[keyEnd] == UInt8(ascii: ":"),
                let valueEnd = JSONCanonicalForm.valueEnd(in: bytes, from: keyEnd + 1)
            else { return nil }
            members.append(Member(key: key, value: (keyEnd + 1)..<valueEnd))
            index = valueEnd
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if index != bytes.count - 1 {
                return nil
            }
        }
        return members
    }

    /// The text of a string value, or nil when the value is not a string.
    public static func string(in bytes: UnsafeBufferPointer<UInt8>, at range: Range<Int>) -> String? {
        JSONCanonicalForm.string(in: bytes, from: range.lowerBound).map(\.text)
    }

    static let sealedPrefix = Array(#"{"sealed":""#.utf8)
    static let sealedSuffix = Array(#""}"#.utf8)

    /// The bytes between the quotes of a sealed value, or nil when the value is not one.
    public static func sealedPayload(in bytes: UnsafeBufferPointer<UInt8>, at range: Range<Int>)
        -> UnsafeBufferPointer<UInt8>?
    {
        let count = range.count
        guard count > sealedPrefix.count + sealedSuffix.count else { return nil }
        for (offset, byte) in sealedPrefix.enumerated() where bytes[range.lowerBound + offset] != byte { return nil }
        for (offset, byte) in sealedSuffix.enumerated()
        where bytes[range.upperBound - sealedSuffix.count + offset] != byte { return nil }
        let inside = UnsafeBufferPointer(
            rebasing: bytes[(range.lowerBound + sealedPrefix.count)..<(range.upperBound - sealedSuffix.count)])
        // Base64url has no quote or backslash, so the value is exactly one string.
        guard !inside.contains(UInt8(ascii: "\"")), !inside.contains(UInt8(ascii: "\\")) else { return nil }
        return inside
    }
}
