import LogbookDomain

/// The name of a consumer group: 1–64 characters from `A–Z a–z 0–9 . _ -`, so that it is
/// safe in a command line, a metric label and a file name alike.
public struct GroupName: Hashable, Sendable, Comparable, CustomStringConvertible {
    public static let maximumLength = 64
    public let rawValue: String

    /// Checks `text` against the rule; `field` names the request field in the error.
    public init(_ text: String, field: String = "name") throws(ServiceError) {
        let allowed = text.utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
        guard !text.isEmpty, text.utf8.count <= Self.maximumLength, allowed else {
            throw ServiceError(
                .invalidInput,
                "\(field) must be 1–\(Self.maximumLength) characters from A–Z, a–z, 0–9, '.', '_' and '-'",
                details: [("field", .string(field))])
        }
        rawValue = text
    }

    /// A name read back from the group store, which only ever holds checked names.
    public init(stored text: String) { rawValue = text }

    public var description: String { rawValue }

    public static func < (left: GroupName, right: GroupName) -> Bool { left.rawValue < right.rawValue }
}
