/// Byte helpers shared by the suites.
enum TestBytes {
    /// The bytes a string of hex digits spells (the known answers are written in hex).
    static func hex(_ text: String) -> [UInt8] {
        let digits = Array(text.utf8)
        precondition(digits.count.isMultiple(of: 2), "an odd number of hex digits")
        return stride(from: 0, to: digits.count, by: 2).map { index in
            UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16)!
        }
    }

    /// `count` bytes that differ from one another and from any other call's (a counter, not
    /// random: a failure names the same bytes on every run).
    static func pattern(_ count: Int, seed: UInt8 = 0) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(seed) &* 31 &+ 1) }
    }

    /// The bytes 0, 1, … 31: the key of the known answers.
    static let knownKey: [UInt8] = Array(0..<32)

    /// UTF-8.
    static func utf8(_ text: String) -> [UInt8] { Array(text.utf8) }
}
