import Foundation
import LogbookWire

/// How `logbook top` writes one refresh: on a terminal, a screen redrawn in place (ANSI:
/// cursor home, clear); elsewhere, one logfmt line per process, `time=… process=worker
/// endpoint=… state=up …` or `state=down error="…"`, with `-` for a figure not known yet.
enum TopView {
    /// One process at one refresh.
    enum Row {
        case worker(endpoint: String, TopFigures.Worker)
        case query(endpoint: String, TopFigures.Query)
        case down(role: String, endpoint: String, reason: String)
    }

    /// The lines for a log or a pipe, stamped `time`.
    static func lines(_ rows: [Row], time: String) -> [String] {
        rows.map { row in
            let fields: [(String, String)]
            switch row {
            case .worker(let endpoint, let figures):
                fields =
                    [("process", "worker"), ("endpoint", endpoint), ("state", "up")] + workerFields(figures)
            case .query(let endpoint, let figures):
                fields = [("process", "query"), ("endpoint", endpoint), ("state", "up")] + queryFields(figures)
            case .down(let role, let endpoint, let reason):
                fields = [("process", role), ("endpoint", endpoint), ("state", "down"), ("error", reason)]
            }
            return ([("time", time)] + fields).map { "\($0.0)=\(logfmt($0.1))" }.joined(separator: " ")
        }
    }

    /// The screen for a terminal: a heading, then a table per role.
    static func screen(_ rows: [Row], time: String, intervalSeconds: Double) -> String {
        var workers: [[String]] = [["WORKER", "STATE"] + workerFields(nil).map { columnHeading($0.0) }]
        var queries: [[String]] = [["QUERY", "STATE"] + queryFields(nil).map { columnHeading($0.0) }]
        for row in rows {
            switch row {
            case .worker(let endpoint, let figures):
                workers.append([endpoint, "up"] + workerFields(figures).map(\.1))
            case .query(let endpoint, let figures):
                queries.append([endpoint, "up"] + queryFields(figures).map(\.1))
            case .down(let role, let endpoint, let reason):
                let down = [endpoint, "DOWN", reason]
                if role == "worker" { workers.append(down) } else { queries.append(down) }
            }
        }
        let heading = "logbook top   \(time)   every \(number(intervalSeconds, 1)) s   (Ctrl-C stops)"
        return "\u{1B}[H\u{1B}[2J" + ([heading, ""] + table(workers) + [""] + table(queries)).joined(separator: "\n")
            + "\n"
    }

    /// A column's heading on the screen: its logfmt key, shorter (`commands_per_s` → `CMD/S`).
    private static func columnHeading(_ key: String) -> String {
        let short = [
            "commands_per_s": "CMD/S", "rejected_per_s": "REJ/S", "events_per_s": "EV/S", "batch_mean": "BATCH",
            "command_ms": "CMD MS", "commit_ms": "COMMIT MS", "subscribers": "SUBS", "uptime_s": "UP S",
            "lag_events": "LAG EV", "lag_s": "LAG S", "applied_per_s": "APPLIED/S", "queries_per_s": "QUERIES/S",
        ]
        return short[key] ?? key.uppercased()
    }

    private static func workerFields(_ figures: TopFigures.Worker?) -> [(String, String)] {
        [
            ("head", figures.map { $0.status.head.map(String.init) ?? "-" } ?? ""),
            ("commands_per_s", number(figures?.commandsPerSecond, 1)),
            ("rejected_per_s", number(figures?.rejectedPerSecond, 1)),
            ("events_per_s", number(figures?.eventsPerSecond, 1)),
            ("batch_mean", number(figures?.batchMean, 2)),
            ("command_ms", number(figures?.commandMilliseconds, 2)),
            ("commit_ms", number(figures?.commitMilliseconds, 2)),
            ("subscribers", figures.map { $0.status.subscribers.map(String.init) ?? "-" } ?? ""),
            ("uptime_s", figures.map { String($0.status.uptimeSeconds) } ?? ""),
        ]
    }

    private static func queryFields(_ figures: TopFigures.Query?) -> [(String, String)] {
        [
            ("checkpoint", figures.map { String($0.status.checkpoint) } ?? ""),
            ("lag_events", figures.map { String($0.status.lag) } ?? ""),
            ("lag_s", number(figures?.status.lagSeconds, 1)),
            ("applied_per_s", number(figures?.appliedPerSecond, 1)),
            ("queries_per_s", number(figures?.queriesPerSecond, 1)),
            ("parked", figures.map { String($0.status.queriesWaiting) } ?? ""),
            ("rebuild", figures.map { rebuild($0.status.rebuild) } ?? ""),
            ("uptime_s", figures.map { String($0.status.uptimeSeconds) } ?? ""),
        ]
    }

    private static func rebuild(_ state: RebuildState) -> String {
        switch state {
        case .idle: "idle"
        case .running(_, let position, let head): "running:\(position)/\(head)"
        case .switching: "switching"
        case .failed: "failed"
        }
    }

    /// A figure with `decimals` decimals, or `-` when unknown.
    private static func number(_ value: Double?, _ decimals: Int) -> String {
        guard let value else { return "-" }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        var text = "\(rounded)"
        if let dot = text.firstIndex(of: "."), !text.contains("e") {
            let have = text.distance(from: dot, to: text.endIndex) - 1
            if have < decimals { text += String(repeating: "0", count: decimals - have) }
            if decimals == 0 { text = String(text[..<dot]) }
        }
        return text
    }

    /// A logfmt value: quoted (with `"` and `\` escaped) when it has a space, a quote or `=`.
    private static func logfmt(_ value: String) -> String {
        guard value.isEmpty || value.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" || $0 == "\\" })
        else { return value }
        let escaped = value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        return "\"\(escaped)\""
    }

    /// Columns padded to their widest cell, two spaces apart.
    private static func table(_ rows: [[String]]) -> [String] {
        let columns = rows.map(\.count).max() ?? 0
        // A row's last cell is never padded, so it does not widen its column (a reason why a
        // process is down runs on past the columns).
        let widths = (0..<columns).map { column in rows.map { column < $0.count - 1 ? $0[column].count : 0 }.max() ?? 0
        }
        return rows.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
    }
}
