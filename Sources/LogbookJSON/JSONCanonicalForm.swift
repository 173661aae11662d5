/// Recognises JSON in the exact form `JSONWriter` writes, without building values, so a
/// document already in that form can be copied as bytes instead of parsed and written again.
///
/// It promises: when `isCanonical(bytes)` is true, `JSONParser.parse(bytes)` succeeds and
/// `JSONWriter.bytes` of the result equals `bytes`, byte for byte. It may answer false for
/// some documents that are canonical (numbers with a fraction or exponent, integers of 19
/// digits or more, objects with non-ASCII keys, very many keys): those take the slow path,
/// which is always correct. It allocates nothing.
public enum JSONCanonicalForm {
    /// True when `bytes` is one whole document in canonical form (see the type's promise).
    public static func isCanonical(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        valueEnd(in: bytes, from: 0) == bytes.count
    }

    /// True when the UTF-8 of `text` is a whole document in canonical form.
    public static func isCanonical(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { isCanonical($0) }
    }

    /// Where the canonical value starting at `start` ends (the index after it), or nil when
    /// no value in canonical form starts there. What follows the value is not looked at.
    public static func valueEnd(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        withUnsafeTemporaryAllocation(of: Range<Int>.self, capacity: Scanner.keyCapacity) { keys in
            var scanner = Scanner(bytes: bytes, index: start, keys: keys)
            return scanner.value(depth: 0) ? scanner.index : nil
        }
    }

    /// Where the canonical string whose opening quote is at `start` ends (the index after
    /// its closing quote), or nil when it is not a string in canonical form.
    public static func stringEnd(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var scanner = Scanner(bytes: bytes, index: start, keys: UnsafeMutableBufferPointer(start: nil, count: 0))
        guard start < bytes.count, bytes[start] == UInt8(ascii: "\""), scanner.string() else { return nil }
        return scanner.index
    }

    /// The text of the canonical string whose opening quote is at `start`, and the index
    /// after its closing quote; nil when no string in canonical form starts there.
    public static func string(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> (text: String, end: Int)? {
        guard let end = stringEnd(in: bytes, from: start) else { return nil }
        let inside = UnsafeBufferPointer(rebasing: bytes[(start + 1)..<(end - 1)])
        guard inside.contains(UInt8(ascii: "\\")) else { return (String(decoding: inside, as: UTF8.self), end) }
        var unescaped: [UInt8] = []
        unescaped.reserveCapacity(inside.count)
        var index = 0
        while index < inside.count {
            let byte = inside[index]
            guard byte == UInt8(ascii: "\\") else {
                unescaped.append(byte)
                index += 1
                continue
            }
            // Only the escapes the scanner accepted can be here.
            switch inside[index + 1] {
            case UInt8(ascii: "n"): unescaped.append(0x0A)
            case UInt8(ascii: "r"): unescaped.append(0x0D)
            case UInt8(ascii: "t"): unescaped.append(0x09)
            case UInt8(ascii: "u"):
                let high = inside[index + 4] - UInt8(ascii: "0")
                let lowDigit = inside[index + 5]
                let low =
                    lowDigit <= UInt8(ascii: "9") ? lowDigit - UInt8(ascii: "0") : lowDigit - UInt8(ascii: "a") + 10
                unescaped.append(high << 4 | low)
                index += 4
            default: unescaped.append(inside[index + 1])
            }
            index += 2
        }
        return (String(decoding: unescaped, as: UTF8.self), end)
    }
}

/// The scanner behind `JSONCanonicalForm`: one pass, no allocation. Keys of the objects
/// being scanned are kept (as byte ranges) in `keys` to find duplicates.
private struct Scanner {
    static let keyCapacity = 128

    let bytes: UnsafeBufferPointer<UInt8>
    var index: Int
    let keys: UnsafeMutableBufferPointer<Range<Int>>
    var keyCount = 0

    init(bytes: UnsafeBufferPointer<UInt8>, index: Int, keys: UnsafeMutableBufferPointer<Range<Int>>) {
        self.bytes = bytes
        self.index = index
        self.keys = keys
    }

    mutating func value(depth: Int) -> Bool {
        guard index < bytes.count else { return false }
        switch bytes[index] {
        case UInt8(ascii: "{"): return object(depth: depth + 1)
        case UInt8(ascii: "["): return array(depth: depth + 1)
        case UInt8(ascii: "\""): return string()
        case UInt8(ascii: "t"): return literal("true")
        case UInt8(ascii: "f"): return literal("false")
        case UInt8(ascii: "n"): return literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return integer()
        default: return false
        }
    }

    mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        let matches = word.withUTF8Buffer { expected in
            (0..<count).allSatisfy { bytes[index + $0] == expected[$0] }
        }
        index += count
        return matches
    }

    /// `0` or `-`? then 1 to 18 digits not starting with 0 (always an `Int`), and no
    /// fraction or exponent; `-0` is not canonical (it is written `0`).
    mutating func integer() -> Bool {
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { return false }
        if bytes[index] == UInt8(ascii: "0") {
            guard !negative else { return false }
            index += 1
        } else {
            let start = index
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            guard index - start <= 18 else { return false }
        }
        guard index < bytes.count else { return true }
        let next = bytes[index]
        return !isDigit(next) && next != UInt8(ascii: ".") && next != UInt8(ascii: "e") && next != UInt8(ascii: "E")
    }

    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    mutating func array(depth: Int) -> Bool {
        guard depth <= JSONParser.defaultMaximumDepth else { return false }
        index += 1
        guard index < bytes.count else { return false }
        if bytes[index] == UInt8(ascii: "]") {
            index += 1
            return true
        }
        while true {
            guard value(depth: depth), index < bytes.count else { return false }
            let separator = bytes[index]
            index += 1
            if separator == UInt8(ascii: "]") { return true }
            guard separator == UInt8(ascii: ",") else { return false }
        }
    }

    mutating func object(depth: Int) -> Bool {
        guard depth <= JSONParser.defaultMaximumDepth else { return false }
        index += 1
        guard index < bytes.count else { return false }
        if bytes[index] == UInt8(ascii: "}") {
            index += 1
            return true
        }
        let firstKey = keyCount
        defer { keyCount = firstKey }
        while true {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return false }
            let keyStart = index
            guard asciiString(), isNewKey(keyStart..<index, since: firstKey) else { return false }
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return false }
            index += 1
            guard value(depth: depth), index < bytes.count else { return false }
            let separator = bytes[index]
            index += 1
            if separator == UInt8(ascii: "}") { return true }
            guard separator == UInt8(ascii: ",") else { return false }
        }
    }

    /// Records a key unless an earlier key of the same object has the same bytes (keys are
    /// ASCII in canonical form, so equal bytes and equal strings are the same thing).
    mutating func isNewKey(_ key: Range<Int>, since firstKey: Int) -> Bool {
        guard keyCount < keys.count else { return false }
        let length = key.count
        for earlier in keys[firstKey..<keyCount] where earlier.count == length {
            if (0..<length).allSatisfy({ bytes[earlier.lowerBound + $0] == bytes[key.lowerBound + $0] }) {
                return false
            }
        }
        keys[keyCount] = key
        keyCount += 1
        return true
    }

    /// A canonical string of ASCII only (object keys: Swift compares strings by canonical
    /// equivalence, so only ASCII keys can be told apart by their bytes).
    mutating func asciiString() -> Bool {
        let start = index
        guard string() else { return false }
        return bytes[start..<index].allSatisfy { $0 < 0x80 }
    }

    /// A string in canonical form: the escapes `JSONWriter` writes and nothing else, no raw
    /// control characters, valid UTF-8.
    mutating func string() -> Bool {
        index += 1
        while true {
            index = PlainASCII.end(of: bytes, from: index)
            guard index < bytes.count else { return false }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return true
            } else if byte == UInt8(ascii: "\\") {
                guard escape() else { return false }
            } else if byte < 0x20 {
                return false
            } else {
                // Past the plain run, what is left is the start of a multi-byte character.
                guard utf8Sequence() else { return false }
            }
        }
    }

    /// `\"`, `\\`, `\n`, `\r`, `\t`, or `\u00xx` (lower-case hex) for another control character.
    mutating func escape() -> Bool {
        guard index + 1 < bytes.count else { return false }
        switch bytes[index + 1] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            index += 2
            return true
        case UInt8(ascii: "u"):
            guard index + 5 < bytes.count, bytes[index + 2] == UInt8(ascii: "0"), bytes[index + 3] == UInt8(ascii: "0"),
                let high = lowerHex(bytes[index + 4]), high <= 1, let low = lowerHex(bytes[index + 5])
            else { return false }
            let scalar = high << 4 | low
            guard scalar != 0x09, scalar != 0x0A, scalar != 0x0D else { return false }
            index += 6
            return true
        default:
            return false
        }
    }

    func lowerHex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    /// One well-formed UTF-8 sequence of two to four bytes.
    mutating func utf8Sequence() -> Bool {
        guard let length = UTF8Validation.sequenceLength(bytes, at: index) else { return false }
        index += length
        return true
    }
}
