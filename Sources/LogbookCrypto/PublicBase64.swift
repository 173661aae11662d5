/// Base64 for bytes that are not secret, such as ciphertexts: the same URL-safe alphabet,
/// no padding and the same strictness as `Base64`, by table lookups. Its time depends on
/// the bytes, so it is never for keys or plaintexts (those go through `Base64`, which is
/// libsodium's constant-time code), and it is several times cheaper.
public enum PublicBase64 {
    private static let alphabet: [UInt8] = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// The value of each byte as a digit; `invalid` for a byte outside the alphabet.
    private static let digits: [UInt8] = {
        var digits = [UInt8](repeating: invalid, count: 256)
        for (value, byte) in alphabet.enumerated() { digits[Int(byte)] = UInt8(value) }
        return digits
    }()

    private static let invalid: UInt8 = 0xFF

    /// The length of `byteCount` bytes' encoding.
    public static func encodedByteCount(_ byteCount: Int) -> Int {
        (byteCount * 4 + 2) / 3
    }

    /// How many bytes a text of `encodedCount` characters decodes to; nil for a length no
    /// encoding has.
    public static func decodedByteCount(_ encodedCount: Int) -> Int? {
        let rest = encodedCount % 4
        guard rest != 1 else { return nil }
        return encodedCount / 4 * 3 + (rest == 0 ? 0 : rest - 1)
    }

    /// Writes the encoding of `bytes` into `text`, which has room for
    /// `encodedByteCount(bytes.count)` bytes; answers how many it wrote.
    public static func encode(_ bytes: UnsafeRawBufferPointer, into text: UnsafeMutableBufferPointer<UInt8>) -> Int {
        let count = encodedByteCount(bytes.count)
        precondition(text.count >= count, "no room for the encoding")
        alphabet.withUnsafeBufferPointer { alphabet in
            var input = 0
            var output = 0
            while input + 3 <= bytes.count {
                let group = UInt32(bytes[input]) << 16 | UInt32(bytes[input + 1]) << 8 | UInt32(bytes[input + 2])
                text[output] = alphabet[Int(group >> 18)]
                text[output + 1] = alphabet[Int(group >> 12 & 0x3F)]
                text[output + 2] = alphabet[Int(group >> 6 & 0x3F)]
                text[output + 3] = alphabet[Int(group & 0x3F)]
                input += 3
                output += 4
            }
            switch bytes.count - input {
            case 2:
                let group = UInt32(bytes[input]) << 16 | UInt32(bytes[input + 1]) << 8
                text[output] = alphabet[Int(group >> 18)]
                text[output + 1] = alphabet[Int(group >> 12 & 0x3F)]
                text[output + 2] = alphabet[Int(group >> 6 & 0x3F)]
            case 1:
                let group = UInt32(bytes[input]) << 16
                text[output] = alphabet[Int(group >> 18)]
                text[output + 1] = alphabet[Int(group >> 12 & 0x3F)]
            default: break
            }
        }
        return count
    }

    /// Decodes `text` into `target`, which has room for `decodedByteCount(text.count)`
    /// bytes, and answers how many it wrote; nil when `text` is not exactly an encoding
    /// `encode` writes (a byte outside the alphabet, a length no encoding has, or bits
    /// left over at the end that are not zero).
    public static func decode(_ text: UnsafeBufferPointer<UInt8>, into target: UnsafeMutableRawBufferPointer) -> Int? {
        guard let count = decodedByteCount(text.count) else { return nil }
        precondition(target.count >= count, "no room for the decoded bytes")
        return digits.withUnsafeBufferPointer { digits -> Int? in
            var input = 0
            var output = 0
            while input + 4 <= text.count {
                let a = digits[Int(text[input])]
                let b = digits[Int(text[input + 1])]
                let c = digits[Int(text[input + 2])]
                let d = digits[Int(text[input + 3])]
                // A valid digit is below 64; `invalid` is not.
                guard (a | b | c | d) & 0xC0 == 0 else { return nil }
                let group = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                target[output] = UInt8(truncatingIfNeeded: group >> 16)
                target[output + 1] = UInt8(truncatingIfNeeded: group >> 8)
                target[output + 2] = UInt8(truncatingIfNeeded: group)
                input += 4
                output += 3
            }
            let rest = text.count - input
            guard rest > 0 else { return output }
            var group: UInt32 = 0
            for offset in 0..<rest {
                let digit = digits[Int(text[input + offset])]
                guard digit & 0xC0 == 0 else { return nil }
                group |= UInt32(digit) << (18 - 6 * offset)
            }
            // Two characters carry one byte and four spare bits, three carry two and two.
            guard group & (rest == 2 ? 0xFFFF : 0xFF) == 0 else { return nil }
            target[output] = UInt8(truncatingIfNeeded: group >> 16)
            if rest == 3 { target[output + 1] = UInt8(truncatingIfNeeded: group >> 8) }
            return output + rest - 1
        }
    }
}
