/// A user's display name: 1–100 characters (and 400 UTF-8 bytes) after trimming, on one line.
public struct PersonName: Hashable, Sendable, CustomStringConvertible {
    public let value: String

    public init(_ raw: String, field: String = "name") throws(DomainError) {
        value = try boundedLine(raw, field: field, range: 1...100)
    }

    public var description: String { value }
}
