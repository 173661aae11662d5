/// An instant, as whole milliseconds since 1970-01-01T00:00:00Z. The domain never reads
/// the clock: instants are handed in.
public struct Timestamp: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let millisecondsSinceEpoch: Int64

    public init(millisecondsSinceEpoch: Int64) {
        self.millisecondsSinceEpoch = millisecondsSinceEpoch
    }

    /// The calendar day (UTC) this instant falls on.
    public var utcDate: CalendarDate {
        CalendarDate(daysSinceEpoch: millisecondsSinceEpoch.floorDivided(by: 86_400_000))
    }

    /// RFC 3339 in UTC with milliseconds: `2026-11-29T18:20:18.123Z`.
    public var rfc3339: String {
        let milliseconds = millisecondsSinceEpoch.floorModulo(86_400_000)
        let seconds = milliseconds / 1000
        return "\(utcDate)T\(pad(seconds / 3600, 2)):\(pad(seconds / 60 % 60, 2)):\(pad(seconds % 60, 2))"
            + ".\(pad(milliseconds % 1000, 3))Z"
    }

    /// Reads back exactly the form `rfc3339` writes (`YYYY-MM-DDTHH:MM:SS.mmmZ`); nil otherwise.
    public init?(rfc3339 text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 24, bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"),
            bytes[16] == UInt8(ascii: ":"), bytes[19] == UInt8(ascii: "."), bytes[23] == UInt8(ascii: "Z"),
            let date = CalendarDate(iso8601: String(decoding: bytes[0..<10], as: UTF8.self))
        else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for byte in bytes[range] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let hours = number(11..<13), hours < 24, let minutes = number(14..<16), minutes < 60,
            let seconds = number(17..<19), seconds < 60, let milliseconds = number(20..<23)
        else { return nil }
        let secondOfDay = (hours * 60 + minutes) * 60 + seconds
        self.init(millisecondsSinceEpoch: (date.daysSinceEpoch * 86_400 + secondOfDay) * 1000 + milliseconds)
    }

    public var description: String { rfc3339 }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.millisecondsSinceEpoch < rhs.millisecondsSinceEpoch
    }
}

/// A proleptic Gregorian calendar day, written `YYYY-MM-DD`.
public struct CalendarDate: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    /// A validated date; nil when the day does not exist (2025-02-29, 2026-13-01).
    public init?(year: Int, month: Int, day: Int) {
        guard (1...12).contains(month), (1...Self.daysIn(month: month, year: year)).contains(day) else {
            return nil
        }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Reads exactly `YYYY-MM-DD`; nil for any other shape or a day that does not exist.
    public init?(iso8601 text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10) else { return nil }
        self.init(year: year, month: month, day: day)
    }

    /// The day `days` after 1970-01-01 (negative before it), by the civil-from-days algorithm.
    public init(daysSinceEpoch days: Int64) {
        let shifted = days + 719_468
        let era = shifted.floorDivided(by: 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        day = Int(dayOfYear - (153 * monthIndex + 2) / 5 + 1)
        month = Int(monthIndex < 10 ? monthIndex + 3 : monthIndex - 9)
        year = Int(yearOfEra + era * 400 + (month <= 2 ? 1 : 0))
    }

    /// Days after 1970-01-01 (negative before it): the inverse of `init(daysSinceEpoch:)`.
    public var daysSinceEpoch: Int64 {
        let shiftedYear = Int64(month <= 2 ? year - 1 : year)
        let era = shiftedYear.floorDivided(by: 400)
        let yearOfEra = shiftedYear - era * 400
        let monthIndex = Int64(month > 2 ? month - 3 : month + 9)
        let dayOfYear = (153 * monthIndex + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    public static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    public static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    public var description: String { "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))" }

    public static func < (lhs: CalendarDate, rhs: CalendarDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }
}

/// A user's date of birth: a real calendar day, from 1900-01-01 up to today.
public struct Birthday: Hashable, Sendable, CustomStringConvertible {
    public static let earliest = CalendarDate(year: 1900, month: 1, day: 1)!

    public let date: CalendarDate

    /// Validates `raw` (`YYYY-MM-DD`) against `today`, which the caller takes from its clock.
    public init(_ raw: String, today: CalendarDate, field: String = "birthday") throws(DomainError) {
        guard let date = CalendarDate(iso8601: raw) else {
            throw .invalidInput(field: field, reason: "must be a real date written YYYY-MM-DD")
        }
        guard date >= Self.earliest, date <= today else {
            throw .invalidInput(field: field, reason: "must lie between \(Self.earliest) and today (\(today))")
        }
        self.date = date
    }

    /// Re-reads a birthday already accepted into the log, without the "not in the future" check.
    public init(recorded raw: String, field: String = "birthday") throws(DomainError) {
        guard let date = CalendarDate(iso8601: raw) else {
            throw .invalidInput(field: field, reason: "must be a real date written YYYY-MM-DD")
        }
        self.date = date
    }

    public var description: String { date.description }
}

private func pad(_ value: some BinaryInteger, _ width: Int) -> String {
    let digits = String(value)
    return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
}

extension Int64 {
    func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }

    /// The remainder with the divisor's sign; computed without multiplying, so `.min` cannot overflow.
    func floorModulo(_ divisor: Int64) -> Int64 {
        let remainder = self % divisor
        return remainder != 0 && (remainder < 0) != (divisor < 0) ? remainder + divisor : remainder
    }
}
