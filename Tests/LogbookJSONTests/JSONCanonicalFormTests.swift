import LogbookJSON
import LogbookTestSupport
import Testing

/// `JSONCanonicalForm`'s promise, checked against the parser and writer themselves: what it
/// accepts reads back to the very same bytes, and what the writer writes it accepts.
@Suite("JSON canonical form")
struct JSONCanonicalFormTests {
    /// Values the recogniser may send to the slow path although the writer wrote them.
    static func mayBeRefused(_ value: JSONValue) -> Bool {
        switch value {
        case .double: true
        case .int(let number): number.magnitude >= 1_000_000_000_000_000_000
        case .array(let elements): elements.contains(where: mayBeRefused)
        case .object(let object): object.contains { !$0.key.utf8.allSatisfy { $0 < 0x80 } || mayBeRefused($0.value) }
        case .null, .bool, .string: false
        }
    }

    static func acceptsExactly(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { JSONCanonicalForm.isCanonical($0) }
    }

    @Test("what the writer writes is recognised, unless it holds a number or key it may refuse")
    func writerOutputIsCanonical() throws {
        var generator = SeededGenerator(seed: 0xC0FFEE)
        var recognised = 0
        for _ in 0..<3_000 {
            let value = RandomJSON.value(&generator, depth: 4)
            let written = JSONWriter.bytes(value)
            if Self.acceptsExactly(written) {
                recognised += 1
            } else {
                #expect(Self.mayBeRefused(value), "refused \(String(decoding: written, as: UTF8.self))")
            }
        }
        #expect(recognised > 1_000)
    }

    @Test("whatever it accepts, the parser reads and the writer writes back byte for byte")
    func acceptedMeansIdentical() throws {
        var generator = SeededGenerator(seed: 42)
        let replacements: [[UInt8]] = [
            Array(" ".utf8), Array("\\/".utf8), Array("\\u0041".utf8), Array("\\u000a".utf8), Array("\\u00E9".utf8),
            Array("\\b".utf8), Array("\\f".utf8), Array("-0".utf8), Array("1.0".utf8), Array("1e2".utf8), [0xC0, 0x80],
            [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE6, 0x97], [0xFF], [0x01], Array("\\u001f".utf8),
            Array(#"\""#.utf8), Array("\"".utf8), Array(",".utf8), Array("}".utf8), Array("0".utf8), Array("01".utf8),
        ]
        var accepted = 0
        var refused = 0
        for _ in 0..<5_000 {
            var bytes = JSONWriter.bytes(RandomJSON.value(&generator, depth: 3, anything: false))
            for _ in 0..<Int.random(in: 1...2, using: &generator) where !bytes.isEmpty {
                let at = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes.remove(at: at)
                case 1: bytes.insert(contentsOf: generator.pick(replacements), at: at)
                default: bytes.replaceSubrange(at...at, with: generator.pick(replacements))
                }
            }
            guard Self.acceptsExactly(bytes) else {
                refused += 1
                continue
            }
            accepted += 1
            let parsed = try JSONParser.parse(bytes)
            #expect(JSONWriter.bytes(parsed) == bytes, "\(String(decoding: bytes, as: UTF8.self))")
        }
        #expect(accepted > 100)
        #expect(refused > 100)
    }

    @Test(
        "refuses JSON the writer would write otherwise, and what is not JSON",
        arguments: [
            #"{"a": 1}"#, " 1", "1 ", #""\/""#, #""\u0041""#, #""\u00E9""#, #""\u000a""#, #""\u001F""#, #""\b""#, "-0",
            "1.0", "1e3", "01", "+1", #"{"a":1,"a":2}"#, "[1,]", "[1", #"{"a":1"#, #"{"a"}"#, "\"a\u{1}\"", "tru",
            "nul",
            "1234567890123456789", #"{"é":1}"#, #""abc"#, "", "[]]",
        ])
    func refusals(text: String) {
        #expect(!JSONCanonicalForm.isCanonical(text))
    }

    @Test(
        "accepts the writer's own forms",
        arguments: [
            #"{"a":{"a":1},"b":[true,false,null]}"#, #""\u001f\u0000\n\r\t\"\\é😀""#, "-5", "0",
            "123456789012345678", "-123456789012345678", "[]", "{}", #"{"b":1,"a":2}"#, #""""#,
        ])
    func acceptances(text: String) throws {
        #expect(JSONCanonicalForm.isCanonical(text))
        #expect(JSONWriter.string(try JSONParser.parse(text)) == text)
    }

    @Test("refuses malformed UTF-8 inside strings")
    func malformedUTF8() {
        let sequences: [[UInt8]] = [
            [0xC0, 0x80], [0xC1, 0xBF], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xF0, 0x80, 0x80, 0x80],
            [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xE6, 0x97], [0x80], [0xC3, 0x28],
        ]
        for sequence in sequences {
            #expect(!Self.acceptsExactly([0x22] + sequence + [0x22]), "\(sequence)")
        }
        #expect(Self.acceptsExactly([0x22, 0xF4, 0x8F, 0xBF, 0xBF, 0xEF, 0xBF, 0xBF, 0xC2, 0x80, 0x22]))
    }

    @Test("bounds nesting as the parser does")
    func depth() {
        let deepest = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(JSONCanonicalForm.isCanonical(deepest))
        let tooDeep = String(repeating: #"{"a":"#, count: 65) + "1" + String(repeating: "}", count: 65)
        #expect(!JSONCanonicalForm.isCanonical(tooDeep))
    }

    @Test("finds where a value inside a larger document ends")
    func valueEnd() {
        let document = Array(#"{"data":{"x":[1,"]"]},"next":3}"#.utf8)
        document.withUnsafeBufferPointer { bytes in
            #expect(JSONCanonicalForm.valueEnd(in: bytes, from: 8) == 21)
            #expect(JSONCanonicalForm.stringEnd(in: bytes, from: 1) == 7)
            #expect(JSONCanonicalForm.stringEnd(in: bytes, from: 2) == nil)
            #expect(JSONCanonicalForm.valueEnd(in: bytes, from: 7) == nil)
        }
    }
}

/// The writer's strings and integers, against the plainest possible spelling of the rules.
@Suite("JSON writer against a reference")
struct JSONWriterReferenceTests {
    static func reference(_ text: String) -> [UInt8] {
        var output: [UInt8] = [0x22]
        for byte in text.utf8 {
            switch byte {
            case 0x22: output += Array(#"\""#.utf8)
            case 0x5C: output += Array(#"\\"#.utf8)
            case 0x0A: output += Array(#"\n"#.utf8)
            case 0x0D: output += Array(#"\r"#.utf8)
            case 0x09: output += Array(#"\t"#.utf8)
            case 0..<0x20:
                let hex = String(byte, radix: 16)
                output += Array(("\\u00" + (hex.count == 1 ? "0" + hex : hex)).utf8)
            default: output.append(byte)
            }
        }
        return output + [0x22]
    }

    @Test("escapes strings exactly as RFC 8259's minimal form")
    func strings() {
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<2_000 {
            let text = RandomJSON.string(&generator, maximumLength: 40)
            #expect(JSONWriter.bytes(.string(text)) == Self.reference(text))
        }
        #expect(JSONWriter.string("a\u{1}\u{1F}\u{7F}") == #""a\u0001\u001f\#u{7F}""#)
    }

    @Test("writes integers as Swift spells them")
    func integers() {
        var generator = SeededGenerator(seed: 8)
        let edges = [0, 1, -1, 9, 10, -9, -10, 99, 100, Int.max, Int.min, Int.max - 1, Int.min + 1]
        for number in edges + (0..<2_000).map({ _ in RandomJSON.integer(&generator) }) {
            #expect(JSONWriter.string(.int(number)) == String(number))
        }
    }
}
