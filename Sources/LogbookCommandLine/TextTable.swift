/// Rows of text in aligned columns, as help shows flags and commands: every column but the
/// last padded to its widest cell, the last wrapped at word boundaries to `width`, its
/// continuation lines starting under it. A newline in the last cell starts a new line.
struct TextTable {
    /// The widest line help prints, where the last column has room to wrap.
    static let width = 96
    /// Spaces before the first column.
    static let indent = 2
    /// Spaces between columns.
    static let gap = 2

    let rows: [[String]]

    /// The width of each column but the last.
    var columnWidths: [Int] {
        let count = (rows.map(\.count).max() ?? 1) - 1
        return (0..<max(count, 0)).map { column in
            rows.map { column < $0.count - 1 ? $0[column].count : 0 }.max() ?? 0
        }
    }

    /// The table's lines; the first column is at least `firstColumnWidth` wide, so that two
    /// tables can line up.
    func lines(firstColumnWidth: Int = 0) -> [String] {
        var widths = columnWidths
        if !widths.isEmpty { widths[0] = max(widths[0], firstColumnWidth) }
        let start = Self.indent + widths.reduce(0) { $0 + $1 + Self.gap }
        let room = max(Self.width - start, 30)
        return rows.flatMap { row -> [String] in
            var head = String(repeating: " ", count: Self.indent)
            for (cell, width) in zip(row.dropLast(), widths) {
                head += cell + String(repeating: " ", count: width - cell.count + Self.gap)
            }
            let wrapped = Self.wrap(row.last ?? "", room)
            let continuation = String(repeating: " ", count: start)
            return wrapped.enumerated().map { index, line in
                let text = (index == 0 ? head : continuation) + line
                return String(text.reversed().drop(while: { $0 == " " }).reversed())
            }
        }
    }

    /// `text` broken into lines of at most `room` characters at spaces (a longer word
    /// stands alone), keeping its own newlines.
    static func wrap(_ text: String, _ room: Int) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).flatMap { paragraph -> [String] in
            var lines: [String] = []
            var line = ""
            for word in paragraph.split(separator: " ") {
                if line.isEmpty {
                    line = String(word)
                } else if line.count + 1 + word.count <= room {
                    line += " " + word
                } else {
                    lines.append(line)
                    line = String(word)
                }
            }
            lines.append(line)
            return lines
        }
    }
}
