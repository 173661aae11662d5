extension String {
    /// The string without leading and trailing whitespace (any Unicode whitespace).
    func trimmingWhitespace() -> String {
        guard let first = firstIndex(where: { !$0.isWhitespace }),
            let last = lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return String(self[first...last])
    }

    /// True when the string holds a control character (newline, tab, NUL, …).
    var containsControlCharacter: Bool {
        unicodeScalars.contains { $0.properties.generalCategory == .control }
    }
}

/// Builds a trimmed, single-line text value whose length in characters lies in `range`.
func boundedLine(_ raw: String, field: String, range: ClosedRange<Int>) throws(DomainError) -> String {
    let text = raw.trimmingWhitespace()
    guard !text.containsControlCharacter else {
        throw .invalidInput(field: field, reason: "must not contain control characters")
    }
    guard range.contains(text.count) else {
        throw .invalidInput(
            field: field, reason: "must be \(range.lowerBound)–\(range.upperBound) characters after trimming")
    }
    return text
}
