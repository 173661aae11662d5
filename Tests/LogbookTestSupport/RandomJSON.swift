public import LogbookJSON

/// Random JSON documents and texts for differential tests of the JSON fast paths: strings
/// full of escapes, control characters, non-ASCII and astral scalars, integers at the
/// edges, nesting.
public struct RandomJSON {
    /// Scalars worth meeting in a string: every escape the writer knows, other control
    /// characters, DEL, two- to four-byte UTF-8, a combining mark, the last BMP scalars.
    static let interesting: [Unicode.Scalar] = [
        "\"", "\\", "/", "\n", "\r", "\t", "\u{0}", "\u{1}", "\u{8}", "\u{C}", "\u{1F}", "\u{7F}", "é", "ß", "€",
        "日", "😀", "\u{301}", "\u{FFFD}", "\u{FFFF}", "\u{10FFFF}", "a", "Z", "0", " ", "-", "_", "{", "}", "[", "]",
        ":", ",",
    ]

    /// A string of up to `maximumLength` scalars, mostly plain letters, with some of `interesting`.
    public static func string(_ generator: inout SeededGenerator, maximumLength: Int = 24) -> String {
        var scalars = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...maximumLength, using: &generator) {
            if generator.chance(30) {
                scalars.append(generator.pick(interesting))
            } else {
                scalars.append(Unicode.Scalar(UInt8.random(in: 0x61...0x7A, using: &generator)))
            }
        }
        return String(scalars)
    }

    /// An integer, often at an edge (0, ±1, 18 digits and, when `anything`, 19: `Int.min`, `Int.max`).
    public static func integer(_ generator: inout SeededGenerator, anything: Bool = true) -> Int {
        var edges = [0, 1, -1, 9, 10, -10, 999_999_999_999_999_999, -999_999_999_999_999_999]
        if anything { edges += [Int.max, Int.min, 1_000_000_000_000_000_000] }
        return generator.chance(30) ? generator.pick(edges) : Int.random(in: -1_000_000...1_000_000, using: &generator)
    }

    /// A value nested at most `depth` levels. Doubles, integers of 19 digits and non-ASCII
    /// keys (what `JSONCanonicalForm` may send to the slow path) only when `anything`.
    public static func value(_ generator: inout SeededGenerator, depth: Int = 3, anything: Bool = true) -> JSONValue {
        switch Int.random(in: 0..<(depth > 0 ? 8 : 6), using: &generator) {
        case 0: return .null
        case 1: return .bool(generator.chance(50))
        case 2: return .int(integer(&generator, anything: anything))
        case 3:
            return anything && generator.chance(50)
                ? .double(Double(Int.random(in: -1000...1000, using: &generator)) / 8)
                : .int(integer(&generator, anything: anything))
        case 4, 5: return .string(string(&generator))
        case 6:
            return .array(
                (0..<Int.random(in: 0...4, using: &generator)).map { _ in
                    value(&generator, depth: depth - 1, anything: anything)
                })
        default: return .object(object(&generator, depth: depth - 1, anything: anything))
        }
    }

    /// An object of up to six members with distinct keys (ASCII unless `anything`).
    public static func object(_ generator: inout SeededGenerator, depth: Int = 2, anything: Bool = true) -> JSONObject {
        var object = JSONObject()
        for _ in 0..<Int.random(in: 0...6, using: &generator) {
            let key =
                anything
                ? string(&generator, maximumLength: 8)
                : String(String(string(&generator, maximumLength: 8).unicodeScalars.filter(\.isASCII)))
            object[key] = value(&generator, depth: depth, anything: anything)
        }
        return object
    }
}
