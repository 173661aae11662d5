import LogbookJSON

/// The report as a text table for a terminal: one block per section, each figure on a line
/// (value, target, met) with its baselines indented below it (their value and the ratio
/// figure ÷ baseline), then notes and details.
enum ReportTable {
    static func text(_ report: BenchReport) -> String {
        var rows: [[String]] = [["figure", "value", "ratio", "target", "met"]]
        var sectionStarts: [Int: String] = [:]
        var notesAfter: [Int: [String]] = [:]
        var section = ""
        for figure in report.figures {
            if figure.section != section {
                section = figure.section
                sectionStarts[rows.count] = section
            }
            let value = figure.value.map { NumberFormat.value($0, figure.unit) } ?? "—"
            let met = figure.met.map { $0 ? "yes" : "NO" } ?? ""
            rows.append([figure.name, value, "", figure.target?.text ?? "", met])
            for baseline in figure.baselines {
                let ratio = figure.ratio(to: baseline).map(NumberFormat.ratio) ?? ""
                rows.append(["  vs " + baseline.name, NumberFormat.value(baseline.value, figure.unit), ratio, "", ""])
            }
            var notes: [String] = []
            if let note = figure.note { notes.append(note) }
            if figure.details.count > 0 {
                notes.append(figure.details.members.map { "\($0.key) \(detailText($0.value))" }.joined(separator: ", "))
            }
            if !notes.isEmpty { notesAfter[rows.count - 1] = notes }
        }

        var widths = [Int](repeating: 0, count: rows[0].count)
        for row in rows {
            for (column, cell) in row.enumerated() { widths[column] = max(widths[column], cell.count) }
        }
        var lines = [
            "logbook-bench: \(report.commandLine)",
            "machine: \(report.machine.summary)",
            "load average before \(report.loadBefore), after \(report.loadAfter); "
                + "ran \(NumberFormat.decimal(report.seconds, places: 1)) s from \(report.startedAt)",
            stealLine(report.stealPercent),
            "ratio = figure ÷ baseline, both measured in this run",
            "",
        ]
        for (index, row) in rows.enumerated() {
            if let name = sectionStarts[index] { lines.append("── \(name) " + String(repeating: "─", count: 40)) }
            let cells = row.enumerated().map { column, cell in
                // Numbers line up on the right, words on the left.
                column == 1 || column == 2
                    ? String(repeating: " ", count: widths[column] - cell.count) + cell
                    : cell + String(repeating: " ", count: widths[column] - cell.count)
            }
            lines.append(cells.joined(separator: "  ").trimmingTrailingSpaces())
            for note in notesAfter[index] ?? [] { lines.append("      " + note) }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Steal above this share of the run's processor time makes the table say its figures
    /// are not to be compared as they are.
    static let noticeableStealPercent = 2.0

    /// How much processor time the host of this virtual machine took during the run.
    static func stealLine(_ percent: Double?) -> String {
        guard let percent else { return "steal: not readable (/proc/stat)" }
        let share = "steal \(NumberFormat.decimal(percent, places: 1)) % of the processors' time"
        return percent < noticeableStealPercent
            ? share
            : share + " (the host ran other work meanwhile: figures are slowed unevenly, compare their ratios)"
    }

    private static func detailText(_ value: JSONValue) -> String {
        switch value {
        case .int(let number): NumberFormat.grouped(Double(number))
        case .double(let number):
            NumberFormat.decimal(number, places: abs(number) >= 1_000 ? 0 : abs(number) >= 10 ? 1 : 2)
        case .string(let text): text
        default: JSONWriter.string(value)
        }
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var copy = self
        while copy.last == " " { copy.removeLast() }
        return copy
    }
}
