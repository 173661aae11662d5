/// An exact, non-negative amount of money with two decimal places, held as whole cents.
/// It is written `"19.99"` on the wire, never as a binary float.
public struct Money: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The largest price accepted: 999,999,999.99.
    public static let maximumCents: Int64 = 99_999_999_999

    public let cents: Int64

    public static let zero = Money(uncheckedCents: 0)

    init(uncheckedCents cents: Int64) { self.cents = cents }

    /// Reads a price: digits, optionally `.` and one or two more digits, at most
    /// 999,999,999.99. `"19.9"` becomes 19.90; signs, exponents and a third decimal are refused.
    public init(_ text: String, field: String = "price") throws(DomainError) {
        let cents = try Self.cents(in: text, field: field)
        guard cents <= Self.maximumCents else {
            throw .invalidInput(field: field, reason: "must be at most 999999999.99")
        }
        self.cents = cents
    }

    /// Re-reads an amount the log already holds (an order total may exceed any price),
    /// up to what 64-bit cents can hold.
    public init(recorded text: String, field: String = "price") throws(DomainError) {
        cents = try Self.cents(in: text, field: field)
    }

    private static func cents(in text: String, field: String) throws(DomainError) -> Int64 {
        let parts = text.utf8.split(separator: UInt8(ascii: "."), maxSplits: 1, omittingEmptySubsequences: false)
        let isDigit: (UInt8) -> Bool = { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        guard let whole = parts.first, !whole.isEmpty, whole.allSatisfy(isDigit) else {
            throw .invalidInput(field: field, reason: "must be a decimal string such as \"19.99\"")
        }
        let fraction = parts.count == 2 ? Array(parts[1]) : []
        guard parts.count == 1 || (1...2).contains(fraction.count), fraction.allSatisfy(isDigit) else {
            throw .invalidInput(field: field, reason: "must have one or two digits after the decimal point")
        }
        var cents: Int64 = 0
        let digits = Array(whole) + fraction + Array(repeating: UInt8(ascii: "0"), count: 2 - fraction.count)
        for digit in digits {
            let (shifted, overflowShift) = cents.multipliedReportingOverflow(by: 10)
            let (added, overflowAdd) = shifted.addingReportingOverflow(Int64(digit - UInt8(ascii: "0")))
            guard !overflowShift, !overflowAdd else { throw .invalidInput(field: field, reason: "is too large") }
            cents = added
        }
        return cents
    }

    /// The exact product of this amount and a quantity. A product beyond what 64-bit cents
    /// hold (92,233,720,368,547,758.07) is refused rather than rounded or wrapped.
    public func multiplied(by quantity: Quantity, field: String = "quantity") throws(DomainError) -> Money {
        let (product, overflow) = cents.multipliedReportingOverflow(by: Int64(quantity.value))
        guard !overflow else {
            throw .invalidInput(field: field, reason: "the total price \(self) × \(quantity) is too large to record")
        }
        return Money(uncheckedCents: product)
    }

    /// The canonical wire form: `"0.30"`, `"19.99"`, `"1200.00"`.
    public var description: String {
        let fraction = cents % 100
        return "\(cents / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }

    public static func < (lhs: Money, rhs: Money) -> Bool { lhs.cents < rhs.cents }
}
