// Integer helpers for calendar and clock arithmetic, shared by `Timestamp` and `CalendarDate`.

/// `value` in decimal, left-padded with zeros to `width` digits.
func pad(_ value: some BinaryInteger, _ width: Int) -> String {
    let digits = String(value)
    return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
}

extension Int64 {
    func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }

    /// The remainder with the divisor's sign; computed without multiplying, so `.min` cannot overflow.
    public func floorModulo(_ divisor: Int64) -> Int64 {
        let remainder = self % divisor
        return remainder != 0 && (remainder < 0) != (divisor < 0) ? remainder + divisor : remainder
    }
}
