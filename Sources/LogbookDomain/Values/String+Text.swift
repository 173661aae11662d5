extension String {
    /// The string without leading and trailing whitespace (any Unicode whitespace).
    func trimmingWhitespace() -> String {
        guard let first = firstIndex(where: { !$0.isWhitespace }),
            let last = lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return String(self[first...last])
    }

    /// True when the string holds a control character or a line break of any kind
    /// (newline, tab, NUL, U+2028 LINE SEPARATOR, U+2029 PARAGRAPH SEPARATOR, …).
    var containsControlCharacter: Bool {
        unicodeScalars.contains {
            switch $0.properties.generalCategory {
            case .control, .lineSeparator, .paragraphSeparator: true
            default: false
            }
        }
    }
}

/// How many UTF-8 bytes a text may use per character it is allowed: enough for any
/// ordinary script, accents or emoji, while a "character" stacked with thousands of
/// combining marks cannot smuggle megabytes into a field.
let bytesPerCharacter = 4

/// Refuses a text longer than `maximumCharacters × bytesPerCharacter` UTF-8 bytes.
func checkByteLength(_ text: String, field: String, maximumCharacters: Int) throws(DomainError) {
    let maximumBytes = maximumCharacters * bytesPerCharacter
    guard text.utf8.count <= maximumBytes else {
        throw .invalidInput(field: field, reason: "must be at most \(maximumBytes) bytes of UTF-8")
    }
}

/// Builds a trimmed, single-line text value whose length in characters lies in `range`.
func boundedLine(_ raw: String, field: String, range: ClosedRange<Int>) throws(DomainError) -> String {
    if raw.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
        // Printable ASCII (most text): the space is its only whitespace, it holds no control
        // character, and each byte is one character. Same checks, same order, no Unicode tables.
        let utf8 = raw.utf8
        guard let first = utf8.firstIndex(where: { $0 != 0x20 }), let last = utf8.lastIndex(where: { $0 != 0x20 })
        else { return try boundedLineChecks("", field: field, range: range, characters: 0) }
        let text = String(raw[first...last])
        return try boundedLineChecks(text, field: field, range: range, characters: text.utf8.count)
    }
    let text = raw.trimmingWhitespace()
    try checkByteLength(text, field: field, maximumCharacters: range.upperBound)
    guard !text.containsControlCharacter else {
        throw .invalidInput(field: field, reason: "must be one line without control characters")
    }
    guard range.contains(text.count) else {
        throw .invalidInput(
            field: field, reason: "must be \(range.lowerBound)–\(range.upperBound) characters after trimming")
    }
    return text
}

/// The checks of `boundedLine` on text already trimmed, known to hold no control character.
private func boundedLineChecks(_ text: String, field: String, range: ClosedRange<Int>, characters: Int)
    throws(DomainError) -> String
{
    try checkByteLength(text, field: field, maximumCharacters: range.upperBound)
    guard range.contains(characters) else {
        throw .invalidInput(
            field: field, reason: "must be \(range.lowerBound)–\(range.upperBound) characters after trimming")
    }
    return text
}
