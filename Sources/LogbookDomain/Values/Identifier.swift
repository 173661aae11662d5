/// Names a kind of identifier and the wire field it usually arrives in.
public protocol IdentifierKind: Sendable {
    static var defaultField: String { get }
}

/// A client-chosen identifier: 1–64 characters of `A–Z a–z 0–9 _ -` (a UUID fits).
/// The phantom `Kind` keeps a user id from being passed where a product id belongs.
public struct Identifier<Kind: IdentifierKind>: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: String

    /// Validates `raw`; `field` names the wire field in the error (an author id arrives as `authorId`).
    public init(_ raw: String, field: String = Kind.defaultField) throws(DomainError) {
        guard Self.isValid(raw) else {
            throw .invalidInput(field: field, reason: "must be 1–64 characters of A–Z, a–z, 0–9, '_' or '-'")
        }
        rawValue = raw
    }

    public static func isValid(_ raw: String) -> Bool {
        let utf8 = raw.utf8
        return (1...64).contains(utf8.count)
            && utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
                    true
                default: false
                }
            }
    }

    public var description: String { rawValue }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

public enum UserIdentifier: IdentifierKind { public static let defaultField = "userId" }
public enum PostIdentifier: IdentifierKind { public static let defaultField = "postId" }
public enum ProductIdentifier: IdentifierKind { public static let defaultField = "productId" }
public enum OrderIdentifier: IdentifierKind { public static let defaultField = "orderId" }

public typealias UserId = Identifier<UserIdentifier>
public typealias PostId = Identifier<PostIdentifier>
public typealias ProductId = Identifier<ProductIdentifier>
public typealias OrderId = Identifier<OrderIdentifier>
