import LogbookJSON

/// One personal field a payload may carry, told by its key's bytes.
enum PersonalField: Int, CaseIterable, Sendable {
    case name, email, gender, birthday

    /// The field's key in a payload.
    var key: String {
        switch self {
        case .name: "name"
        case .email: "email"
        case .gender: "gender"
        case .birthday: "birthday"
        }
    }

    /// The key's UTF-8 bytes.
    var keyBytes: [UInt8] { Self.keysAsBytes[rawValue] }

    private static let keysAsBytes: [[UInt8]] = allCases.map { Array($0.key.utf8) }

    /// The field whose key is `key`; nil for any other key.
    init?(key: String) {
        guard let field = Self.allCases.first(where: { $0.key == key }) else { return nil }
        self = field
    }

    /// The field whose key is exactly the UTF-8 `key` (the bytes between its quotes).
    init?(keyBytes key: UnsafeBufferPointer<UInt8>) {
        // The keys differ in length: one comparison at most.
        let field: PersonalField
        switch key.count {
        case 4: field = .name
        case 5: field = .email
        case 6: field = .gender
        case 8: field = .birthday
        default: return nil
        }
        guard Self.keysAsBytes[field.rawValue].withUnsafeBufferPointer({ PersonalPayload.equal($0, key) }) else {
            return nil
        }
        self = field
    }
}

/// A set of personal fields, a bit each.
struct PersonalFieldSet: OptionSet, Sendable {
    let rawValue: UInt8

    init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    init(_ fields: some Sequence<PersonalField>) {
        self.init(rawValue: fields.reduce(0) { $0 | 1 << $1.rawValue })
    }

    func contains(_ field: PersonalField) -> Bool {
        rawValue & 1 << field.rawValue != 0
    }
}

/// Where, in one payload in canonical form, the owner's id and the personal values lie:
/// found in one scan that allocates nothing, for the vault to seal and open in place.
///
/// Ranges are offsets into the bytes scanned, valid for any copy of the same payload.
struct PersonalPayload {
    /// The owner's id (`PersonalFields.ownerField`): its string value, quotes included.
    private(set) var owner: Range<Int>?
    /// How many personal values the payload holds.
    private(set) var count = 0
    private var fields = InlineArray<4, PersonalField>(repeating: .name)
    private var values = InlineArray<4, Range<Int>>(repeating: 0..<0)
    /// For each value that is sealed, where its Base64 text lies; an empty range otherwise.
    private var sealedTexts = InlineArray<4, Range<Int>>(repeating: 0..<0)

    /// The `index`th personal value in payload order: its field, and where its value lies.
    subscript(index: Int) -> (field: PersonalField, value: Range<Int>) {
        (fields[index], values[index])
    }

    /// Where the Base64 text of the `index`th personal value lies when that value is sealed
    /// (`PersonalFields`' form); nil otherwise.
    func sealedText(_ index: Int) -> Range<Int>? {
        sealedTexts[index].isEmpty ? nil : sealedTexts[index]
    }

    /// Whether any personal value is sealed.
    var holdsSealedValue: Bool {
        (0..<count).contains { !sealedTexts[$0].isEmpty }
    }

    private static let ownerKey = Array(PersonalFields.ownerField.utf8)

    /// Scans `bytes` for the owner's id and the values of `personal`; nil when `bytes` is
    /// not one object in canonical form (or names a field twice).
    init?(_ bytes: UnsafeBufferPointer<UInt8>, personal: PersonalFieldSet) {
        guard bytes.count >= 2, bytes[0] == UInt8(ascii: "{"), bytes[bytes.count - 1] == UInt8(ascii: "}") else {
            return nil
        }
        var seen = PersonalFieldSet(rawValue: 0)
        var index = 1
        while index < bytes.count - 1 {
            guard bytes[index] == UInt8(ascii: "\""), let keyEnd = JSONCanonicalForm.stringEnd(in: bytes, from: index),
                keyEnd < bytes.count, bytes[keyEnd] == UInt8(ascii: ":")
            else { return nil }
            // Canonical keys escape only what a field name never holds: compared as bytes.
            let key = UnsafeBufferPointer(rebasing: bytes[(index + 1)..<(keyEnd - 1)])
            let field = PersonalField(keyBytes: key).flatMap { personal.contains($0) ? $0 : nil }
            let sealed = field == nil ? nil : Self.sealedText(in: bytes, from: keyEnd + 1)
            guard
                let valueEnd = sealed.map({ $0.upperBound + PersonalFields.sealedSuffix.count })
                    ?? Self.valueEnd(in: bytes, from: keyEnd + 1)
            else { return nil }
            let value = (keyEnd + 1)..<valueEnd
            if let field {
                guard !seen.contains(field) else { return nil }
                seen = PersonalFieldSet(rawValue: seen.rawValue | 1 << field.rawValue)
                fields[count] = field
                values[count] = value
                sealedTexts[count] = sealed ?? 0..<0
                count += 1
            } else if Self.ownerKey.withUnsafeBufferPointer({ Self.equal($0, key) }) {
                guard owner == nil else { return nil }
                owner = value
            }
            index = valueEnd
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if index != bytes.count - 1 {
                return nil
            }
        }
        if bytes.count > 2 && bytes[bytes.count - 2] == UInt8(ascii: ",") { return nil }
    }

    /// Where the text lies of the sealed value (`{"sealed":"…"}`) at `start`: printable
    /// ASCII with no quote nor backslash (any Base64url, and what damage may leave, which
    /// opening then reports as malformed), so the first quote ends it and such a value is
    /// canonical; nil when no value of that form starts there.
    private static func sealedText(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Range<Int>? {
        let prefixMatches = PersonalFields.sealedPrefix.withUnsafeBufferPointer { prefix in
            bytes.count - start > prefix.count + PersonalFields.sealedSuffix.count
                && equal(UnsafeBufferPointer(rebasing: bytes[start..<(start + prefix.count)]), prefix)
        }
        guard prefixMatches else { return nil }
        let textStart = start + PersonalFields.sealedPrefix.count
        let end = plainText.withUnsafeBufferPointer { plainText in
            var end = textStart
            while end < bytes.count, plainText[Int(bytes[end])] { end += 1 }
            return end
        }
        guard end > textStart, end + 1 < bytes.count, bytes[end] == UInt8(ascii: "\""),
            bytes[end + 1] == UInt8(ascii: "}")
        else { return nil }
        return textStart..<end
    }

    /// Whether each byte may be in a sealed value's text.
    private static let plainText: [Bool] = (0...255).map { byte in
        byte >= 0x20 && byte < 0x7F && byte != Int(UInt8(ascii: "\"")) && byte != Int(UInt8(ascii: "\\"))
    }

    /// Where the value in canonical form at `start` ends.
    private static func valueEnd(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        // Most values are strings, which need no record of an object's keys.
        start < bytes.count && bytes[start] == UInt8(ascii: "\"")
            ? JSONCanonicalForm.stringEnd(in: bytes, from: start)
            : JSONCanonicalForm.valueEnd(in: bytes, from: start)
    }

    /// Whether the two hold the same bytes.
    static func equal(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Bool {
        guard left.count == right.count else { return false }
        for index in 0..<left.count where left[index] != right[index] { return false }
        return true
    }

    /// The owner's id as text; nil when there is none or it is not a string.
    func ownerId(in bytes: UnsafeBufferPointer<UInt8>) -> String? {
        guard let owner else { return nil }
        return JSONCanonicalForm.string(in: bytes, from: owner.lowerBound).map(\.text)
    }
}
