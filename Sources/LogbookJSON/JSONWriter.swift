/// Serialises `JSONValue` to compact UTF-8 JSON. Keys come out in the object's order;
/// strings are escaped per RFC 8259; non-finite doubles, which JSON cannot carry, become `null`.
///
/// The output is the *canonical form* `JSONCanonicalForm` recognises: no whitespace; in
/// strings only `\"`, `\\`, `\n`, `\r`, `\t` and, for the other control characters,
/// `\u00xx` with lower-case hex, every other character as its UTF-8 bytes; integers in
/// shortest decimal form. Changing any of that changes what `JSONCanonicalForm` must accept.
public enum JSONWriter {
    public static func bytes(_ value: JSONValue) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        write(value, into: &output)
        return output
    }

    public static func string(_ value: JSONValue) -> String {
        String(decoding: bytes(value), as: UTF8.self)
    }

    public static func write(_ value: JSONValue, into output: inout [UInt8]) {
        switch value {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .int(let integer): writeInteger(integer, into: &output)
        case .double(let double):
            if double.isFinite {
                output.append(contentsOf: double.description.utf8)
            } else {
                output.append(contentsOf: "null".utf8)
            }
        case .string(let text): writeString(text, into: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (offset, element) in elements.enumerated() {
                if offset > 0 { output.append(UInt8(ascii: ",")) }
                write(element, into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            for (offset, member) in object.members.enumerated() {
                if offset > 0 { output.append(UInt8(ascii: ",")) }
                writeString(member.key, into: &output)
                output.append(UInt8(ascii: ":"))
                write(member.value, into: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// Writes `text` as a JSON string. Runs of bytes that need no escape are copied at once.
    public static func writeString(_ text: String, into output: inout [UInt8]) {
        var text = text
        text.withUTF8 { writeEscaped($0, into: &output) }
    }

    /// Writes the text whose UTF-8 is `bytes` as a JSON string: the same bytes as
    /// `writeString(String(decoding: bytes, as: UTF8.self))`.
    public static func writeString(utf8 bytes: UnsafeBufferPointer<UInt8>, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        writeStringContent(utf8: bytes, into: &output)
        output.append(UInt8(ascii: "\""))
    }

    /// Writes what goes between the quotes of `writeString(utf8:into:)`, for a caller whose
    /// fixed text already holds them. Text of printable ASCII without quotes or backslashes
    /// (ids, names, types) is checked a word at a time and copied at once; bytes that are
    /// not UTF-8 are repaired, as `String(decoding:)` does.
    public static func writeStringContent(utf8 bytes: UnsafeBufferPointer<UInt8>, into output: inout [UInt8]) {
        if PlainASCII.isPlain(bytes) {
            output.append(contentsOf: bytes)
        } else if UTF8Validation.isValid(bytes) {
            writeEscapedContent(bytes, into: &output)
        } else {
            var repaired = String(decoding: bytes, as: UTF8.self)
            repaired.withUTF8 { writeEscapedContent($0, into: &output) }
        }
    }

    /// Valid UTF-8 as a quoted JSON string.
    private static func writeEscaped(_ bytes: UnsafeBufferPointer<UInt8>, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        writeEscapedContent(bytes, into: &output)
        output.append(UInt8(ascii: "\""))
    }

    /// Valid UTF-8, escaped, without the quotes.
    private static func writeEscapedContent(_ bytes: UnsafeBufferPointer<UInt8>, into output: inout [UInt8]) {
        var runStart = 0
        for (offset, byte) in bytes.enumerated() where byte < 0x20 || byte == 0x22 || byte == 0x5C {
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<offset]))
            appendEscape(of: byte, into: &output)
            runStart = offset + 1
        }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
    }

    private static func appendEscape(of byte: UInt8, into output: inout [UInt8]) {
        output.append(0x5C)
        switch byte {
        case 0x22: output.append(0x22)
        case 0x5C: output.append(0x5C)
        case 0x0A: output.append(UInt8(ascii: "n"))
        case 0x0D: output.append(UInt8(ascii: "r"))
        case 0x09: output.append(UInt8(ascii: "t"))
        default:
            output.append(UInt8(ascii: "u"))
            output.append(UInt8(ascii: "0"))
            output.append(UInt8(ascii: "0"))
            output.append(hexDigit(byte >> 4))
            output.append(hexDigit(byte & 0x0F))
        }
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    /// Writes `integer` in decimal without building a `String`.
    public static func writeInteger(_ integer: Int, into output: inout [UInt8]) {
        withDecimal(integer) { output.append(contentsOf: $0) }
    }

    /// The most bytes `withDecimal` hands over: a sign and 19 digits.
    public static let maximumIntegerLength = 20

    /// Calls `body` with `integer` in decimal (the sign included), formed on the stack.
    @inline(__always)
    public static func withDecimal<Result>(_ integer: Int, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        var magnitude = integer.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for a sign and 20 digits (24 bytes)
        return withUnsafeMutableBytes(of: &digits) { buffer in
            var start = 24
            repeat {
                start -= 1
                buffer[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if integer < 0 {
                start -= 1
                buffer[start] = UInt8(ascii: "-")
            }
            return body(UnsafeRawBufferPointer(rebasing: buffer[start...]))
        }
    }
}
