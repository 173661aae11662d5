/// A syntactically valid email address (`local@domain.tld`, at most 254 bytes), kept as
/// written; `normalized` is the lower-cased form that uniqueness is judged by.
public struct EmailAddress: Hashable, Sendable, CustomStringConvertible {
    public let value: String
    public let normalized: NormalizedEmail

    public init(_ raw: String, field: String = "email") throws(DomainError) {
        let text = raw.trimmingWhitespace()
        guard let reason = Self.problem(with: text) else {
            value = text
            normalized = NormalizedEmail(text)
            return
        }
        throw .invalidInput(field: field, reason: reason)
    }

    public var description: String { value }

    /// Why `text` is not an address we accept, or nil when it is one.
    static func problem(with text: String) -> String? {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { return "must not be empty" }
        guard bytes.count <= 254 else { return "must be at most 254 characters" }
        guard let at = bytes.lastIndex(of: UInt8(ascii: "@")) else { return "must contain '@'" }
        let local = bytes[..<at]
        let domain = bytes[(at + 1)...]
        guard (1...64).contains(local.count) else { return "the part before '@' must be 1–64 characters" }
        guard local.allSatisfy(isLocalByte) else { return "the part before '@' has a character not allowed there" }
        guard local.first != UInt8(ascii: "."), local.last != UInt8(ascii: "."),
            !containsDoubleDot(local)
        else { return "the part before '@' must not start or end with '.' or contain '..'" }
        let labels = domain.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard labels.count >= 2 else { return "the domain must contain a '.'" }
        for label in labels {
            guard (1...63).contains(label.count), label.allSatisfy(isDomainByte),
                label.first != UInt8(ascii: "-"), label.last != UInt8(ascii: "-")
            else { return "the domain is not a valid host name" }
        }
        guard let tld = labels.last, tld.count >= 2, tld.allSatisfy(isLetter) else {
            return "the domain must end in a top-level domain of letters"
        }
        return nil
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
    }

    private static func isDomainByte(_ byte: UInt8) -> Bool {
        isLetter(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-")
    }

    private static func isLocalByte(_ byte: UInt8) -> Bool {
        isDomainByte(byte) || Array("!#$%&'*+/=?^_`{|}~.".utf8).contains(byte)
    }

    private static func containsDoubleDot(_ bytes: ArraySlice<UInt8>) -> Bool {
        zip(bytes, bytes.dropFirst()).contains { $0 == UInt8(ascii: ".") && $1 == UInt8(ascii: ".") }
    }
}

/// An email address in the form used to judge uniqueness: ASCII lower-cased.
public struct NormalizedEmail: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let value: String

    /// Lower-cases an address that `EmailAddress` already accepted (ASCII only, so no locale).
    init(_ address: String) {
        value = String(decoding: address.utf8.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    /// Re-reads a normalised address (from a stream name or a stored event), validating it.
    public init(normalized raw: String, field: String = "email") throws(DomainError) {
        let address = try EmailAddress(raw, field: field)
        guard address.normalized.value == raw else {
            throw .invalidInput(field: field, reason: "must be lower-case")
        }
        self = address.normalized
    }

    public var description: String { value }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.value < rhs.value }
}
