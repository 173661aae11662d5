import LogbookJSON
import LogbookTestSupport
import Testing

@Suite("JSON reader")
struct JSONParserTests {
    @Test("reads every kind of value")
    func values() throws {
        let value = try JSONParser.parse(#" {"a": [1, -2, 3.5, 1e3, true, false, null], "b": {"c": "d"}, "e": ""} "#)
        #expect(value == ["a": [1, -2, .double(3.5), .double(1000), true, false, nil], "b": ["c": "d"], "e": ""])
    }

    @Test("keeps object keys in document order")
    func keyOrder() throws {
        let object = try #require(try JSONParser.parse(#"{"z":1,"a":2,"m":3}"#).objectValue)
        #expect(object.keys == ["z", "a", "m"])
    }

    @Test("decodes escapes, including surrogate pairs")
    func escapes() throws {
        let value = try JSONParser.parse(#""q\"b\\s\/n\nt\tu\u00e9\ud83d\ude00""#)
        #expect(value == .string("q\"b\\s/n\nt\tué😀"))
    }

    @Test("integers stay exact; larger ones become doubles")
    func numbers() throws {
        #expect(try JSONParser.parse("9007199254740993") == .int(9_007_199_254_740_993))
        #expect(try JSONParser.parse("-0") == .int(0))
        #expect(try JSONParser.parse("123456789012345678901234567890") == .double(1.2345678901234568e29))
    }

    @Test(
        "refuses what RFC 8259 refuses, saying where",
        arguments: [
            ("", "unexpected end of input"), ("{", "expected a string key"), ("[1,]", "unexpected character ']'"),
            (#"{"a":1,}"#, "expected a string key"), ("01", "leading zeros"), ("1.", "expected a digit after '.'"),
            ("+1", "unexpected character '+'"), ("NaN", "unexpected character 'N'"), ("tru", "unexpected end of input"),
            (#""abc"#, "unterminated string"), ("\"a\u{01}b\"", "control character"), (#""\x""#, "invalid escape"),
            (#""\ud800""#, "unpaired surrogate"), (#"{"a":1,"a":2}"#, "duplicate key"), ("1 2", "after the document"),
            ("1e999", "out of range"), (#"{'a':1}"#, "expected a string key"),
        ])
    func refusals(text: String, reason: String) {
        #expect {
            _ = try JSONParser.parse(text)
        } throws: { error in
            (error as? JSONSyntaxError)?.reason.contains(reason) == true
        }
    }

    @Test("refuses invalid UTF-8 inside strings")
    func invalidUTF8() {
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse([0x22, 0xC3, 0x28, 0x22]) }
    }

    @Test("bounds nesting depth")
    func depth() throws {
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(deep) }
        let fine = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(try JSONParser.parse(fine).arrayValue != nil)
    }
}

@Suite("JSON writer")
struct JSONWriterTests {
    @Test("writes compact JSON in key order and escapes what must be escaped")
    func writes() {
        let value: JSONValue = ["b": 1, "a": [true, nil, .double(0.5)], "s": "q\"\\\n\u{01}é"]
        #expect(JSONWriter.string(value) == #"{"b":1,"a":[true,null,0.5],"s":"q\"\\\n\u0001é"}"#)
    }

    @Test(
        "what it writes reads back the same",
        arguments: [
            JSONValue.string("tab\there \u{7F} 😀 \u{2028}"), ["nested": ["deeper": [1, 2, ["x": nil]]]], .int(Int.min),
            .double(-1.5e-7),
        ])
    func roundTrip(value: JSONValue) throws {
        #expect(try JSONParser.parse(JSONWriter.bytes(value)) == value)
    }

    @Test("non-finite doubles, which JSON cannot carry, are written as null")
    func nonFinite() {
        #expect(JSONWriter.string([.double(.infinity), .double(.nan)]) == "[null,null]")
    }

    @Test("object assignment appends, replaces in place, and removes with nil")
    func objectEditing() {
        var object = JSONObject()
        object["a"] = 1
        object["b"] = 2
        object["a"] = 3
        object["c"] = nil
        #expect(object.keys == ["a", "b"])
        object["a"] = nil
        #expect(JSONWriter.string(.object(object)) == #"{"b":2}"#)
    }
}

@Suite("JSON reader at scale")
struct JSONScaleTests {
    /// Key lookups are constant-time, so a wide object parses in linear time; a quadratic
    /// reader would spend minutes here and hit the limit.
    @Test("a 100,000-key object parses, and duplicate keys among them are still found", .timeLimit(.minutes(1)))
    func wideObject() throws {
        let members = (0..<100_000).map { "\"k\($0)\":\($0)" }
        let object = try #require(try JSONParser.parse("{" + members.joined(separator: ",") + "}").objectValue)
        #expect(object.count == 100_000)
        #expect(object["k99999"] == 99_999)
        #expect(throws: JSONSyntaxError.self) {
            try JSONParser.parse("{" + members.joined(separator: ",") + ",\"k5\":0}")
        }
    }

    @Test("objects stay correct as they grow past the size where a key index takes over, and shrink back")
    func indexThreshold() {
        var object = JSONObject()
        for n in 0..<40 { object["k\(n)"] = .int(n) }
        object["k3"] = 300
        #expect(object.count == 40)
        #expect((0..<40).allSatisfy { object["k\($0)"] == .int($0 == 3 ? 300 : $0) })
        for n in stride(from: 0, to: 40, by: 2) { object["k\(n)"] = nil }
        #expect(object.keys == stride(from: 1, to: 40, by: 2).map { "k\($0)" })
        #expect((0..<40).allSatisfy { object["k\($0)"] == ($0 % 2 == 1 ? .int($0 == 3 ? 300 : $0) : nil) })
        object["k0"] = 0
        #expect(object.keys.last == "k0")
        #expect(object["k0"] == 0 && object["k39"] == 39)
    }

    @Test("integers of every size are written exactly")
    func integers() throws {
        let samples = [0, 7, -7, 10, 100, -100, 1_000_000_007, Int.max, Int.min, Int.min + 1]
        for n in samples {
            #expect(JSONWriter.string(.int(n)) == String(n))
        }
        var generator = SeededGenerator(seed: 42)
        for _ in 0..<2_000 {
            let n = Int(truncatingIfNeeded: generator.next()) >> Int(generator.next() % 64)
            #expect(JSONWriter.string(.int(n)) == String(n))
        }
    }

    @Test("strings with escapes between runs of plain text, and every control character, read back the same")
    func escapeRuns() throws {
        let controls = String(decoding: (0..<0x20).map { UInt8($0) }, as: UTF8.self)
        for text in ["", "\"", "a\"b", "\\\\", "plain", "é\u{0}ü\n\"😀\\x", controls, "x" + controls + "y"] {
            #expect(try JSONParser.parse(JSONWriter.bytes(.string(text))) == .string(text))
        }
        #expect(JSONWriter.string(.string("\u{1F}\u{0B}")) == #""\u001f\u000b""#)
    }

    @Test("removing a key keeps the others findable")
    func removalReindexes() {
        var object: JSONObject = ["a": 1, "b": 2, "c": 3]
        object["a"] = nil
        #expect(object["b"] == 2)
        #expect(object["c"] == 3)
        object["d"] = 4
        #expect(object.keys == ["b", "c", "d"])
    }
}
