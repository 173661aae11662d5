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
