import LogbookDomain
import LogbookTestSupport
import Testing

/// A straightforward reference calendar: count days one year and one month at a time.
enum ReferenceCalendar {
    static func isLeap(_ year: Int) -> Bool { (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 }

    static func daysInYear(_ year: Int) -> Int { isLeap(year) ? 366 : 365 }

    static func daysInMonth(_ month: Int, _ year: Int) -> Int {
        [31, isLeap(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
    }

    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int64 {
        var days = 0
        if year >= 1970 {
            for y in 1970..<year { days += daysInYear(y) }
        } else {
            for y in year..<1970 { days -= daysInYear(y) }
        }
        for m in 1..<month { days += daysInMonth(m, year) }
        return Int64(days + day - 1)
    }

    static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// RFC 3339 by walking whole days from the epoch (only for instants near it).
    static func rfc3339(_ milliseconds: Int64) -> String {
        var days = milliseconds / 86_400_000
        var rest = milliseconds % 86_400_000
        if rest < 0 {
            days -= 1
            rest += 86_400_000
        }
        var (year, month, day) = (1970, 1, 1)
        var remaining = days
        while remaining > 0 {
            day += 1
            if day > daysInMonth(month, year) { (day, month) = (1, month + 1) }
            if month > 12 { (month, year) = (1, year + 1) }
            remaining -= 1
        }
        while remaining < 0 {
            day -= 1
            if day < 1 {
                month -= 1
                if month < 1 { (month, year) = (12, year - 1) }
                day = daysInMonth(month, year)
            }
            remaining += 1
        }
        let ms = rest % 1000
        let seconds = rest / 1000
        return "\(pad(Int64(year), 4))-\(pad(Int64(month), 2))-\(pad(Int64(day), 2))"
            + "T\(pad(seconds / 3600, 2)):\(pad(seconds / 60 % 60, 2)):\(pad(seconds % 60, 2)).\(pad(ms, 3))Z"
    }
}

@Suite("Calendar dates")
struct CalendarDateTests {
    @Test func matchesDayCountingFrom1600To2500() {
        // Walk day by day in both directions from the epoch and compare every day.
        var (year, month, day) = (1970, 1, 1)
        var mismatches = 0
        for days in Int64(0)...Int64(193_000) {
            let date = CalendarDate(daysSinceEpoch: days)
            if (date.year, date.month, date.day) != (year, month, day) {
                mismatches += 1
                if mismatches < 5 { Issue.record("day \(days): got \(date), expected \(year)-\(month)-\(day)") }
            }
            day += 1
            if day > ReferenceCalendar.daysInMonth(month, year) { (day, month) = (1, month + 1) }
            if month > 12 { (month, year) = (1, year + 1) }
        }
        (year, month, day) = (1970, 1, 1)
        for days in stride(from: Int64(0), through: -135_000, by: -1) {
            let date = CalendarDate(daysSinceEpoch: days)
            if (date.year, date.month, date.day) != (year, month, day) {
                mismatches += 1
                if mismatches < 5 { Issue.record("day \(days): got \(date), expected \(year)-\(month)-\(day)") }
            }
            day -= 1
            if day < 1 {
                month -= 1
                if month < 1 { (month, year) = (12, year - 1) }
                day = ReferenceCalendar.daysInMonth(month, year)
            }
        }
        #expect(mismatches == 0)
    }

    @Test(arguments: [UInt64(1), 42, 20_260_301])
    func roundTripsFarDaysAgainstTheReference(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        for _ in 0..<200 {
            let days = Int64.random(in: -3_000_000...3_000_000, using: &random)
            let date = CalendarDate(daysSinceEpoch: days)
            #expect(
                CalendarDate(year: date.year, month: date.month, day: date.day) == date, "seed \(seed), day \(days)")
            #expect(
                ReferenceCalendar.daysSinceEpoch(year: date.year, month: date.month, day: date.day) == days,
                "seed \(seed), day \(days) gave \(date)")
        }
    }

    @Test func knownDays() {
        #expect(CalendarDate(daysSinceEpoch: 0).description == "1970-01-01")
        #expect(CalendarDate(daysSinceEpoch: -1).description == "1969-12-31")
        #expect(CalendarDate(daysSinceEpoch: 11_016).description == "2000-02-29")
        #expect(CalendarDate(daysSinceEpoch: 11_017).description == "2000-03-01")
        #expect(CalendarDate(daysSinceEpoch: -25_508).description == "1900-03-01")
        #expect(CalendarDate(daysSinceEpoch: -25_509).description == "1900-02-28")
        #expect(CalendarDate(daysSinceEpoch: 47_541).description == "2100-03-01")
        #expect(CalendarDate(daysSinceEpoch: -719_528).description == "0000-01-01")
    }

    @Test func leapYears() {
        #expect(CalendarDate.isLeap(2000))
        #expect(CalendarDate.isLeap(2024))
        #expect(!CalendarDate.isLeap(1900))
        #expect(!CalendarDate.isLeap(2100))
        #expect(!CalendarDate.isLeap(2023))
        for year in 1..<3000 { #expect(CalendarDate.isLeap(year) == ReferenceCalendar.isLeap(year)) }
        #expect(CalendarDate(year: 2000, month: 2, day: 29) != nil)
        #expect(CalendarDate(year: 2024, month: 2, day: 29) != nil)
        #expect(CalendarDate(year: 1900, month: 2, day: 29) == nil)
        #expect(CalendarDate(year: 2023, month: 2, day: 29) == nil)
        #expect(CalendarDate(year: 2100, month: 2, day: 29) == nil)
    }

    @Test(arguments: [(2025, 2, 29), (2026, 13, 1), (2026, 0, 1), (2026, 1, 0), (2026, 4, 31), (2026, 1, 32)])
    func refusesDaysThatDoNotExist(_ year: Int, _ month: Int, _ day: Int) {
        #expect(CalendarDate(year: year, month: month, day: day) == nil)
    }

    @Test func readsExactlyYYYYMMDD() {
        #expect(CalendarDate(iso8601: "2024-02-29") == CalendarDate(year: 2024, month: 2, day: 29))
        for text in [
            "2024-2-29", "2024/02/29", "20240229", " 2024-02-29", "2024-02-29 ", "2024-02-29T00:00:00Z",
            "+024-02-29", "2024-0a-29", "", "2023-02-29", "2024-13-01",
        ] {
            #expect(CalendarDate(iso8601: text) == nil, "\(text.debugDescription)")
        }
    }

    @Test func ordersChronologically() {
        let dates = [(1999, 12, 31), (2000, 1, 1), (2000, 1, 2), (2000, 2, 1)].map {
            CalendarDate(year: $0.0, month: $0.1, day: $0.2)!
        }
        #expect(dates == dates.sorted())
        #expect(zip(dates, dates.dropFirst()).allSatisfy { $0 < $1 })
    }
}

@Suite("Timestamps")
struct TimestampTests {
    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00.000Z"),
        (-1, "1969-12-31T23:59:59.999Z"),
        (-86_400_000, "1969-12-31T00:00:00.000Z"),
        (-86_400_001, "1969-12-30T23:59:59.999Z"),
        (1_700_000_000_000, "2023-11-14T22:13:20.000Z"),
        (951_782_400_000, "2000-02-29T00:00:00.000Z"),
        (951_868_799_999, "2000-02-29T23:59:59.999Z"),
        (1_709_210_096_007, "2024-02-29T12:34:56.007Z"),
        (-2_203_977_600_000, "1900-02-28T00:00:00.000Z"),
        (-2_203_891_200_000, "1900-03-01T00:00:00.000Z"),
        (253_402_300_799_999, "9999-12-31T23:59:59.999Z"),
        (-62_167_219_200_000, "0000-01-01T00:00:00.000Z"),
    ])
    func formatsRFC3339(_ milliseconds: Int64, _ expected: String) {
        let timestamp = Timestamp(millisecondsSinceEpoch: milliseconds)
        #expect(timestamp.rfc3339 == expected)
        #expect(timestamp.description == expected)
        if abs(milliseconds) < 10_000_000_000_000 {
            #expect(ReferenceCalendar.rfc3339(milliseconds) == expected, "the reference agrees")
        }
    }

    @Test(arguments: [UInt64(7), 1_234_567])
    func formatsLikeTheReference(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        for _ in 0..<100 {
            // Within ±20 years of the epoch, where the day-walking reference stays quick.
            let milliseconds = Int64.random(in: -631_152_000_000...631_152_000_000, using: &random)
            #expect(
                Timestamp(millisecondsSinceEpoch: milliseconds).rfc3339 == ReferenceCalendar.rfc3339(milliseconds),
                "seed \(seed), ms \(milliseconds)")
        }
    }

    @Test func utcDateIsTheDayTheInstantFallsOn() {
        #expect(Timestamp(millisecondsSinceEpoch: -1).utcDate == CalendarDate(year: 1969, month: 12, day: 31))
        #expect(Timestamp(millisecondsSinceEpoch: 86_399_999).utcDate == CalendarDate(year: 1970, month: 1, day: 1))
        #expect(Timestamp(millisecondsSinceEpoch: 86_400_000).utcDate == CalendarDate(year: 1970, month: 1, day: 2))
    }

    @Test func ordersByInstant() {
        #expect(Timestamp(millisecondsSinceEpoch: -5) < Timestamp(millisecondsSinceEpoch: 3))
    }

    @Test func extremeInstantsFormatWithoutCrashing() {
        #expect(Timestamp(millisecondsSinceEpoch: .min).rfc3339.hasSuffix("Z"))
        #expect(Timestamp(millisecondsSinceEpoch: .max).rfc3339.hasSuffix(".807Z"))
        #expect(Timestamp(millisecondsSinceEpoch: .min + 86_400_000).rfc3339.hasSuffix("Z"))
        #expect(Timestamp(millisecondsSinceEpoch: -1).rfc3339 == "1969-12-31T23:59:59.999Z")
    }
}

@Suite("Birthdays")
struct BirthdayTests {
    @Test(arguments: ["1900-01-01", "2000-02-29", "2024-02-29", "1999-12-31", "2026-03-01", "2026-02-28"])
    func acceptsRealDaysFrom1900UpToToday(_ raw: String) throws {
        #expect(try Birthday(raw, today: today).description == raw)
    }

    @Test(arguments: [
        "1899-12-31", "2026-03-02", "2100-01-01", "1900-02-29", "2023-02-29", "2025-02-29", "2026-02-30", "2026-04-31",
        "2026-13-01", "2026-00-10", "2026-01-00", "2026-1-1", "2026/01/01", "01-01-2026", "", " 2000-01-01",
        "2000-01-01T00:00:00Z", "yesterday",
    ])
    func refusesOthers(_ raw: String) {
        expectInvalidInput(field: "birthday", "\(raw.debugDescription)") { _ = try Birthday(raw, today: today) }
    }

    @Test func todayIsTheCallersToday() throws {
        let leapDay = CalendarDate(year: 2028, month: 2, day: 29)!
        #expect(try Birthday("2028-02-29", today: leapDay).date == leapDay)
        expectInvalidInput(field: "birthday") { _ = try Birthday("2028-02-29", today: today) }
    }

    @Test func recordedBirthdaysSkipTheTodayCheck() throws {
        #expect(try Birthday(recorded: "2999-01-01").description == "2999-01-01")
        expectInvalidInput(field: "birthday") { _ = try Birthday(recorded: "2023-02-29") }
        expectInvalidInput(field: "dob") { _ = try Birthday(recorded: "x", field: "dob") }
    }
}
