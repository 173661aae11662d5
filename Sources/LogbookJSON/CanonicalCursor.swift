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
        // Through the base pointers, eight bytes at a time: the bounds are checked once, above.
        let matches = literal.withUTF8Buffer { expected in
            guard let here = bytes.baseAddress?.advanced(by: index), let wanted = expected.baseAddress else {
                return count == 0
            }
            let hereRaw = UnsafeRawPointer(here)
            let wantedRaw = UnsafeRawPointer(wanted)
            var offset = 0
            while offset + 8 <= count {
                guard
                    hereRaw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                        == wantedRaw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                else { return false }
                offset += 8
            }
            while offset < count {
                guard here[offset] == wanted[offset] else { return false }
                offset += 1
            }
            return true
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

    /// A canonical integer (what `JSONParser` reads as `.int`), read in one pass with the
    /// rules of `JSONCanonicalForm`: `0`, or `-`? and 1 to 18 digits not starting with 0,
    /// with no digit, fraction or exponent after it.
    public mutating func integer() -> Int? {
        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        var at = index
        guard at < bytes.count else { return nil }
        let negative = bytes[at] == UInt8(ascii: "-")
        if negative { at += 1 }
        guard at < bytes.count, isDigit(bytes[at]) else { return nil }
        var value = 0
        if bytes[at] == UInt8(ascii: "0") {
            guard !negative else { return nil }
            at += 1
        } else {
            let start = at
            while at < bytes.count, isDigit(bytes[at]) {
                value = value * 10 + Int(bytes[at] - UInt8(ascii: "0"))
                at += 1
                guard at - start <= 18 else { return nil }
            }
        }
        if at < bytes.count {
            let next = bytes[at]
            guard !isDigit(next), next != UInt8(ascii: "."), next != UInt8(ascii: "e"), next != UInt8(ascii: "E")
            else { return nil }
        }
        index = at
        return negative ? -value : value
    }
}
