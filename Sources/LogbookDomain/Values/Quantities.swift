/// A positive number of items asked for: 1 to `maximum`.
public struct Quantity: Hashable, Sendable, CustomStringConvertible {
    public static let maximum = 1_000_000_000

    public let value: Int

    public init(_ value: Int, field: String = "quantity") throws(DomainError) {
        guard (1...Self.maximum).contains(value) else {
            throw .invalidInput(field: field, reason: "must be an integer from 1 to \(Self.maximum)")
        }
        self.value = value
    }

    public var description: String { String(value) }
}

/// How many items of a product are on hand: 0 to `maximum`, never negative.
public struct Stock: Hashable, Sendable, Comparable, CustomStringConvertible {
    public static let maximum = 1_000_000_000

    public let value: Int

    public static let empty = Stock(unchecked: 0)

    init(unchecked value: Int) { self.value = value }

    public init(_ value: Int, field: String = "stock") throws(DomainError) {
        guard (0...Self.maximum).contains(value) else {
            throw .invalidInput(field: field, reason: "must be an integer from 0 to \(Self.maximum)")
        }
        self.value = value
    }

    /// True while there is at least one item.
    public var isAvailable: Bool { value > 0 }

    /// The stock after `quantity` more arrive, or an error past the maximum.
    public func adding(_ quantity: Quantity) throws(DomainError) -> Stock {
        try Stock(value + quantity.value, field: "quantity")
    }

    /// The stock after `quantity` leave; nil when there are not enough.
    public func removing(_ quantity: Quantity) -> Stock? {
        value >= quantity.value ? Stock(unchecked: value - quantity.value) : nil
    }

    public var description: String { String(value) }

    public static func < (lhs: Stock, rhs: Stock) -> Bool { lhs.value < rhs.value }
}
