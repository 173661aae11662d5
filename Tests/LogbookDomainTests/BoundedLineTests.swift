import LogbookDomain
import LogbookTestSupport
import Testing

/// Single-line texts take a shortcut for printable ASCII: it must accept, trim and refuse
/// exactly as the general Unicode rules do.
@Suite("Single-line text")
struct BoundedLineTests {
    /// The general rules, written out plainly: trim Unicode whitespace, then bytes, control
    /// characters and line separators, then the count of characters.
    static func reference(_ raw: String, maximum: Int) -> Result<String, DomainError> {
        let characters = Array(raw)
        guard let first = characters.firstIndex(where: { !$0.isWhitespace }),
            let last = characters.lastIndex(where: { !$0.isWhitespace })
        else { return .failure(.invalidInput(field: "name", reason: "must be 1–\(maximum) characters after trimming")) }
        let text = String(characters[first...last])
        if text.utf8.count > maximum * 4 {
            return .failure(.invalidInput(field: "name", reason: "must be at most \(maximum * 4) bytes of UTF-8"))
        }
        let control = text.unicodeScalars.contains {
            [.control, .lineSeparator, .paragraphSeparator].contains($0.properties.generalCategory)
        }
        if control {
            return .failure(.invalidInput(field: "name", reason: "must be one line without control characters"))
        }
        guard (1...maximum).contains(text.count) else {
            return .failure(.invalidInput(field: "name", reason: "must be 1–\(maximum) characters after trimming"))
        }
        return .success(text)
    }

    @Test("names of printable ASCII, spaces, tabs and other scripts come out as the general rules say")
    func agreesWithTheGeneralRules() {
        var random = SeededGenerator(seed: 100)
        let pieces = [" ", "  ", "a", "Z", "~", "!", "\t", "\n", "\u{7F}", "é", "\u{2028}", "\u{A0}", "😀", "e\u{301}"]
        for _ in 0..<5_000 {
            var raw = ""
            for _ in 0..<Int.random(in: 0...12, using: &random) {
                raw +=
                    random.chance(70)
                    ? String(UnicodeScalar(UInt8.random(in: 0x20...0x7E, using: &random))) : random.pick(pieces)
            }
            if random.chance(10) { raw += String(repeating: "x", count: 100) }
            let actual = Result { () throws(DomainError) in try PersonName(raw).value }
            #expect(actual == Self.reference(raw, maximum: 100), "\(raw.debugDescription)")
        }
    }
}
