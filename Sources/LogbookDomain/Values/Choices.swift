/// A user's subscription tier.
public enum Subscription: String, Sendable, CaseIterable {
    case free, premium, enterprise

    /// Premium and enterprise subscribers may use premium features.
    public var canAccessPremiumFeatures: Bool { self != .free }
}

/// A user's gender as they chose to state it.
public enum Gender: String, Sendable, CaseIterable {
    case male, female, other, unknown
}

/// The departments a product belongs to.
public enum ProductCategory: String, Sendable, CaseIterable {
    case electronics, clothing, food
}

/// Where an order stands. Orders are `pending` when placed.
public enum OrderStatus: String, Sendable, CaseIterable {
    case pending
}

/// A closed set of choices with one wire spelling each.
public protocol WireChoice: RawRepresentable, CaseIterable, Sendable where RawValue == String {}

extension WireChoice {
    /// Reads a choice from its wire spelling; the error names the allowed ones.
    public static func parse(_ raw: String, field: String) throws(DomainError) -> Self {
        guard let choice = Self(rawValue: raw) else {
            let allowed = allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
            throw .invalidInput(field: field, reason: "must be one of \(allowed)")
        }
        return choice
    }
}

extension Subscription: WireChoice {}
extension Gender: WireChoice {}
extension ProductCategory: WireChoice {}
extension OrderStatus: WireChoice {}
