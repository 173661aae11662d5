/// The things a domain entity can be, as error messages and details name them.
public enum EntityKind: String, Sendable {
    case user, post, product, order
}

/// A detail attached to an error, for clients that act on it (the stock still available, say).
public enum ErrorDetail: Sendable, Equatable {
    case string(String)
    case int(Int)
}

/// Why the domain refused a command. Each case maps to one stable wire `code`; the
/// `message` is for people and `details` for programs.
public enum DomainError: Error, Sendable, Equatable {
    /// A value broke a rule; `field` names it as the wire does (`email`, `price`, …).
    case invalidInput(field: String, reason: String)
    case notFound(EntityKind, id: String)
    case alreadyExists(EntityKind, id: String)
    /// Another live user holds the address given (compared case-insensitively). The address
    /// is not repeated: errors go to process logs, which carry no personal data.
    case emailTaken
    /// The product's stock is 0.
    case productNotAvailable(productId: String)
    /// The product has some stock, but less than asked for.
    case insufficientStock(productId: String, requested: Int, available: Int)

    /// The stable machine-readable code clients see.
    public var code: String {
        switch self {
        case .invalidInput: "invalid_input"
        case .notFound: "not_found"
        case .alreadyExists: "already_exists"
        case .emailTaken: "email_taken"
        case .productNotAvailable: "product_not_available"
        case .insufficientStock: "insufficient_stock"
        }
    }

    public var message: String {
        switch self {
        case .invalidInput(let field, let reason): "\(field): \(reason)"
        case .notFound(let kind, let id): "\(kind.rawValue) '\(id)' does not exist"
        case .alreadyExists(let kind, let id): "\(kind.rawValue) '\(id)' already exists"
        case .emailTaken: "the email address is already in use by another user"
        case .productNotAvailable(let id): "product '\(id)' is out of stock"
        case .insufficientStock(let id, let requested, let available):
            "product '\(id)' has \(available) in stock, fewer than the \(requested) requested"
        }
    }

    /// Machine-readable details, in a stable order.
    public var details: [(key: String, value: ErrorDetail)] {
        switch self {
        case .invalidInput(let field, _): [("field", .string(field))]
        case .notFound(let kind, let id), .alreadyExists(let kind, let id):
            [("entity", .string(kind.rawValue)), ("id", .string(id))]
        case .emailTaken: [("field", .string("email"))]
        case .productNotAvailable(let id): [("productId", .string(id)), ("available", .int(0))]
        case .insufficientStock(let id, let requested, let available):
            [("productId", .string(id)), ("requested", .int(requested)), ("available", .int(available))]
        }
    }
}
