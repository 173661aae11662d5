/// A product's name: 1–200 characters (and 800 UTF-8 bytes) after trimming, on one line.
public struct ProductName: Hashable, Sendable, CustomStringConvertible {
    public let value: String

    public init(_ raw: String, field: String = "name") throws(DomainError) {
        value = try boundedLine(raw, field: field, range: 1...200)
    }

    public var description: String { value }
}

/// A post's title: 1–200 characters (and 800 UTF-8 bytes) after trimming, on one line.
public struct PostTitle: Hashable, Sendable, CustomStringConvertible {
    public let value: String

    public init(_ raw: String, field: String = "title") throws(DomainError) {
        value = try boundedLine(raw, field: field, range: 1...200)
    }

    public var description: String { value }
}

/// A post's body: at most 50,000 characters (and 200,000 UTF-8 bytes), kept exactly as
/// written (it may be empty).
public struct PostContent: Hashable, Sendable, CustomStringConvertible {
    public static let maximumLength = 50_000

    public let value: String

    public init(_ raw: String, field: String = "content") throws(DomainError) {
        try checkByteLength(raw, field: field, maximumCharacters: Self.maximumLength)
        guard raw.count <= Self.maximumLength else {
            throw .invalidInput(field: field, reason: "must be at most \(Self.maximumLength) characters")
        }
        value = raw
    }

    public var description: String { value }
}
