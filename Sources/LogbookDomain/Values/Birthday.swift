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
