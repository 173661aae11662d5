/// One of the buckets email addresses are spread over for their claims: the stream
/// `email-<bucket>` holds the claims of every address in it. A bucket is four lower-case
/// hex digits (65,536 buckets), a prefix of a keyed hash of the normalised address chosen
/// outside the domain (`EmailBucketing`), so a stream name tells at most which of many
/// addresses might be in it, and says nothing at all of a forgotten one.
public struct EmailBucket: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The number of hex digits in a bucket's name.
    public static let digits = 4

    public let rawValue: String

    /// Validates `raw`: exactly `digits` characters of `0–9 a–f`.
    public init(_ raw: String) throws(DomainError) {
        let bytes = raw.utf8
        guard bytes.count == Self.digits,
            bytes.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        else {
            throw .invalidInput(field: "bucket", reason: "must be \(Self.digits) lower-case hexadecimal digits")
        }
        rawValue = raw
    }

    public var description: String { rawValue }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// How addresses are spread over buckets: a pure function handed to the decisions that
/// claim addresses, as a clock or an id is. The service's is keyed by its master key;
/// tests may use any function.
public struct EmailBucketing: Sendable {
    private let choose: @Sendable (NormalizedEmail) -> EmailBucket

    public init(_ choose: @escaping @Sendable (NormalizedEmail) -> EmailBucket) {
        self.choose = choose
    }

    /// The bucket whose stream holds the claims of `email`.
    public func bucket(of email: NormalizedEmail) -> EmailBucket { choose(email) }
}
