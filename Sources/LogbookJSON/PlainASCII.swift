/// Finds runs of *plain* bytes: printable ASCII (0x20–0x7F) other than `"` and `\`, the
/// bytes a JSON string carries as they are and that need no UTF-8 check. Looks at eight
/// bytes at a time (each test below is exact for "some byte of the word"), so the ids,
/// names and types that fill most fields cost a few instructions per word.
public enum PlainASCII {
    /// True when every byte of `bytes` is plain.
    public static func isPlain(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress, bytes.count >= 8 else { return bytes.allSatisfy(isPlain(byte:)) }
        let raw = UnsafeRawPointer(base)
        var index = 0
        while index + 8 < bytes.count {
            guard isPlain(word: raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)) else { return false }
            index += 8
        }
        // The last eight bytes, overlapping what was checked: no byte at a time.
        return isPlain(word: raw.loadUnaligned(fromByteOffset: bytes.count - 8, as: UInt64.self))
    }

    /// The index of the first byte at or after `start` that is not plain (`bytes.count`
    /// when there is none).
    public static func end(of bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var index = start
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            while index + 8 <= bytes.count, isPlain(word: raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)) {
                index += 8
            }
        }
        while index < bytes.count, isPlain(byte: bytes[index]) { index += 1 }
        return index
    }

    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highs: UInt64 = 0x8080_8080_8080_8080

    /// No byte of `word` is 0x80 or above, below 0x20, `"` or `\`.
    private static func isPlain(word: UInt64) -> Bool {
        let control = (word &- ones &* 0x20) & ~word  // a byte below 0x20 sets its high bit
        let quote = hasZeroByte(word ^ (ones &* 0x22))
        let backslash = hasZeroByte(word ^ (ones &* 0x5C))
        return (word | control | quote | backslash) & highs == 0
    }

    /// Non-zero (in some high bit) exactly when some byte of `word` is zero.
    private static func hasZeroByte(_ word: UInt64) -> UInt64 {
        (word &- ones) & ~word & highs
    }

    private static func isPlain(byte: UInt8) -> Bool {
        byte >= 0x20 && byte < 0x80 && byte != 0x22 && byte != 0x5C
    }
}
