import LogbookDomain

/// `Timestamp.rfc3339` (`YYYY-MM-DDTHH:MM:SS.mmmZ`) written as bytes without building strings.
enum RFC3339Writer {
    static func write(millisecondsSinceEpoch: Int64, into output: inout [UInt8]) {
        guard let fixed = FixedWidth(millisecondsSinceEpoch: millisecondsSinceEpoch) else {
            output.append(contentsOf: Timestamp(millisecondsSinceEpoch: millisecondsSinceEpoch).rfc3339.utf8)
            return
        }
        fixed.withText { output.append(contentsOf: $0) }
    }

    /// A timestamp in years 0–9999, whose text has a fixed width; other years have no fixed
    /// width and are left to the general formatter.
    struct FixedWidth {
        static let length = 24

        private let date: CalendarDate
        private let millisecondOfDay: Int

        init?(millisecondsSinceEpoch: Int64) {
            date = Timestamp(millisecondsSinceEpoch: millisecondsSinceEpoch).utcDate
            guard (0...9999).contains(date.year) else { return nil }
            millisecondOfDay = Int(millisecondsSinceEpoch.floorModulo(86_400_000))
        }

        /// Calls `body` with the text, formed in 24 bytes on the stack.
        @inline(__always)
        func withText<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
            let second = millisecondOfDay / 1000
            let millisecond = millisecondOfDay % 1000
            var text: (UInt64, UInt64, UInt64) = (0, 0, 0)
            return withUnsafeMutableBytes(of: &text) { bytes in
                Self.twoDigits(date.year / 100, bytes, 0)
                Self.twoDigits(date.year % 100, bytes, 2)
                bytes[4] = UInt8(ascii: "-")
                Self.twoDigits(date.month, bytes, 5)
                bytes[7] = UInt8(ascii: "-")
                Self.twoDigits(date.day, bytes, 8)
                bytes[10] = UInt8(ascii: "T")
                Self.twoDigits(second / 3600, bytes, 11)
                bytes[13] = UInt8(ascii: ":")
                Self.twoDigits(second / 60 % 60, bytes, 14)
                bytes[16] = UInt8(ascii: ":")
                Self.twoDigits(second % 60, bytes, 17)
                bytes[19] = UInt8(ascii: ".")
                bytes[20] = UInt8(ascii: "0") + UInt8(millisecond / 100)
                Self.twoDigits(millisecond % 100, bytes, 21)
                bytes[23] = UInt8(ascii: "Z")
                return body(UnsafeRawBufferPointer(bytes))
            }
        }

        /// `value` (0–99) in two digits at `offset`.
        @inline(__always)
        private static func twoDigits(_ value: Int, _ bytes: UnsafeMutableRawBufferPointer, _ offset: Int) {
            bytes[offset] = UInt8(ascii: "0") + UInt8(value / 10)
            bytes[offset + 1] = UInt8(ascii: "0") + UInt8(value % 10)
        }
    }
}
