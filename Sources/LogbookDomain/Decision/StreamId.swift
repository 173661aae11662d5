/// The stream an event lives on. Names are `<category>-<id>`: `user-u1`, `post-p1`,
/// `product-p1`, `order-o1`, and `email-3fa2` for the bucket of email claims that keep
/// addresses unique (no name carries personal data).
public enum StreamId: Hashable, Sendable, CustomStringConvertible {
    case user(UserId)
    case post(PostId)
    case product(ProductId)
    case order(OrderId)
    case email(EmailBucket)

    public var category: String {
        switch self {
        case .user: "user"
        case .post: "post"
        case .product: "product"
        case .order: "order"
        case .email: "email"
        }
    }

    public var id: String {
        switch self {
        case .user(let id): id.rawValue
        case .post(let id): id.rawValue
        case .product(let id): id.rawValue
        case .order(let id): id.rawValue
        case .email(let bucket): bucket.rawValue
        }
    }

    /// The stream's name in the log.
    public var name: String { "\(category)-\(id)" }

    public var description: String { name }

    /// Reads a stream name back; nil for names this domain does not use.
    public init?(name: String) {
        guard let dash = name.firstIndex(of: "-") else { return nil }
        let id = String(name[name.index(after: dash)...])
        do {
            switch name[..<dash] {
            case "user": self = .user(try UserId(id))
            case "post": self = .post(try PostId(id))
            case "product": self = .product(try ProductId(id))
            case "order": self = .order(try OrderId(id))
            case "email": self = .email(try EmailBucket(id))
            default: return nil
            }
        } catch {
            return nil
        }
    }
}
