import LogbookJSON
import LogbookTestSupport
import Testing

/// Strings written and recognised straight from bytes (the `ReadLog` pages written from the
/// store's rows), eight bytes at a time: the same answers as the `String` paths for any
/// bytes, with the odd byte at every place in a word.
@Suite("JSON strings from bytes")
struct StringBytesTests {
    /// Mostly plain letters, and every kind of byte the word-at-a-time checks must find:
    /// controls, space, quote, backslash, DEL, UTF-8 lead and continuation bytes, and bytes
    /// that never appear in UTF-8.
    static let odd: [UInt8] = [
        0x00, 0x01, 0x09, 0x0A, 0x1F, 0x20, 0x21, 0x22, 0x5B, 0x5C, 0x5D, 0x7E, 0x7F, 0x80, 0xBF, 0xC3, 0xA9, 0xE2,
        0x82, 0xAC, 0xF0, 0x9F, 0x98, 0x80, 0xFF,
    ]

    static func randomBytes(_ generator: inout SeededGenerator) -> [UInt8] {
        (0..<Int.random(in: 0...40, using: &generator)).map { _ in
            generator.chance(80) ? UInt8.random(in: 0x61...0x7A, using: &generator) : generator.pick(odd)
        }
    }

    @Test("writing a string from its bytes gives the bytes of writing it as a String, invalid UTF-8 repaired")
    func writeFromBytes() {
        var generator = SeededGenerator(seed: 31)
        // Mismatches are gathered and checked once: thousands of expectations cost more
        // than the checks themselves.
        var mismatches: [[UInt8]] = []
        for _ in 0..<1_000 {
            let bytes = Self.randomBytes(&generator)
            var fromBytes: [UInt8] = [0x5B]
            bytes.withUnsafeBufferPointer { JSONWriter.writeString(utf8: $0, into: &fromBytes) }
            var fromString: [UInt8] = [0x5B]
            JSONWriter.writeString(String(decoding: bytes, as: UTF8.self), into: &fromString)
            if fromBytes != fromString { mismatches.append(bytes) }
        }
        #expect(mismatches.isEmpty)
        var empty: [UInt8] = []
        JSONWriter.writeString(utf8: UnsafeBufferPointer(start: nil, count: 0), into: &empty)
        #expect(empty == Array(#""""#.utf8))
    }

    @Test("a string without escapes is canonical exactly when it is UTF-8 without control characters")
    func canonicalStrings() {
        var generator = SeededGenerator(seed: 32)
        var accepted = 0
        var mismatches: [[UInt8]] = []
        for _ in 0..<1_000 {
            let inside = Self.randomBytes(&generator).filter { $0 != 0x22 && $0 != 0x5C }
            let quoted = [0x22] + inside + [0x22]
            let expected =
                inside.allSatisfy { $0 >= 0x20 }
                && inside.withUnsafeBufferPointer { String(validating: $0, as: UTF8.self) != nil }
            let canonical = quoted.withUnsafeBufferPointer { JSONCanonicalForm.isCanonical($0) }
            // Cut short, the string is never whole.
            let cutShort = quoted.dropLast().withUnsafeBufferPointer { JSONCanonicalForm.isCanonical($0) }
            if canonical != expected || cutShort { mismatches.append(inside) }
            if canonical { accepted += 1 }
        }
        #expect(mismatches.isEmpty)
        #expect(accepted > 50)
    }
}
