/// Walks bytes laid out exactly as `JSONWriter` writes them (a reply, an envelope, a payload),
/// for readers that take a known layout straight from its bytes. Each step consumes what it
/// reads and answers nil (or false) when the bytes differ; the caller then takes its general,
/// slower path. It allocates nothing but the strings it returns.
public struct CanonicalCursor {
    public let bytes: UnsafeBufferPointer<UInt8>
    public var index = 0

    public init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// Consumes `literal` when the bytes at the cursor are exactly it.
    public mutating func take(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        let matches = literal.withUTF8Buffer { expected in
            (0..<count).allSatisfy { bytes[index + $0] == expected[$0] }
        }
        if matches { index += count }
        return matches
    }

    /// A canonical string's text.
    public mutating func string() -> String? {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\""),
            let (text, end) = JSONCanonicalForm.string(in: bytes, from: index)
        else { return nil }
        index = end
        return text
    }

    /// A canonical integer (what `JSONParser` reads as `.int`).
    public mutating func integer() -> Int? {
        guard let end = JSONCanonicalForm.valueEnd(in: bytes, from: index) else { return nil }
        var value = 0
        var negative = false
        for byte in bytes[index..<end] {
            if byte == UInt8(ascii: "-") {
                negative = true
            } else if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            } else {
                return nil
            }
        }
        index = end
        return negative ? -value : value
    }
}
