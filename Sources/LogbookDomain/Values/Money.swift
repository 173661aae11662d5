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
        // One pass over the bytes: whole digits, then optionally `.` and one or two digits.
        var cents: Int64 = 0
        var wholeDigits = 0
        var fractionDigits = 0
        var seenPoint = false
        func add(_ digit: UInt8) throws(DomainError) {
            let (shifted, overflowShift) = cents.multipliedReportingOverflow(by: 10)
            let (added, overflowAdd) = shifted.addingReportingOverflow(Int64(digit))
            guard !overflowShift, !overflowAdd else { throw .invalidInput(field: field, reason: "is too large") }
            cents = added
        }
        let notDecimal = DomainError.invalidInput(field: field, reason: "must be a decimal string such as \"19.99\"")
        let badFraction = DomainError.invalidInput(
            field: field, reason: "must have one or two digits after the decimal point")
        for byte in text.utf8 {
            if byte == UInt8(ascii: "."), !seenPoint {
                guard wholeDigits > 0 else { throw notDecimal }
                seenPoint = true
            } else if byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                if seenPoint {
                    fractionDigits += 1
                    guard fractionDigits <= 2 else { throw badFraction }
                } else {
                    wholeDigits += 1
                }
                try add(byte - UInt8(ascii: "0"))
            } else {
                throw seenPoint ? badFraction : notDecimal
            }
        }
        guard wholeDigits > 0 else { throw notDecimal }
        guard !seenPoint || fractionDigits > 0 else { throw badFraction }
        for _ in fractionDigits..<2 { try add(0) }
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
