/// Writes metric families in Prometheus's text exposition format, version 0.0.4: for each
/// family a `# HELP` and a `# TYPE` line, then its samples, one per line; a histogram as its
/// cumulative `_bucket{le=…}` lines (ending with `+Inf`), `_sum` and `_count`. Help text
/// and label values are escaped as the format says; numbers are written so that a whole
/// number has no decimal point.
public enum ExpositionWriter {
    /// The Content-Type of what `text` writes.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    public static func text(_ families: [MetricFamily]) -> String {
        var out = ""
        for family in families {
            out += "# HELP \(family.name) \(escapeHelp(family.help))\n"
            out += "# TYPE \(family.name) \(family.kind.rawValue)\n"
            for sample in family.samples {
                switch sample.value {
                case .number(let value):
                    out += line(family.name, sample.labels, number(value))
                case .histogram(let histogram):
                    let cumulative = histogram.cumulativeCounts
                    for (index, count) in cumulative.enumerated() {
                        let bound = index < histogram.bounds.count ? number(histogram.bounds[index]) : "+Inf"
                        out += line(
                            family.name + "_bucket", sample.labels + [.init("le", bound)], String(count))
                    }
                    out += line(family.name + "_sum", sample.labels, number(histogram.sum))
                    out += line(family.name + "_count", sample.labels, String(histogram.count))
                }
            }
        }
        return out
    }

    private static func line(_ name: String, _ labels: [MetricFamily.Label], _ value: String) -> String {
        guard !labels.isEmpty else { return "\(name) \(value)\n" }
        let pairs = labels.map { "\($0.name)=\"\(escapeLabel($0.value))\"" }.joined(separator: ",")
        return "\(name){\(pairs)} \(value)\n"
    }

    /// `+Inf`, `-Inf`, `NaN`, a whole number without a decimal point, else Swift's shortest
    /// form that reads back as the same double (which Prometheus's parser accepts).
    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    /// Help text: backslash and newline escaped.
    static func escapeHelp(_ text: String) -> String {
        text.replacingAll([("\\", "\\\\"), ("\n", "\\n")])
    }

    /// A label value: backslash, double quote and newline escaped.
    static func escapeLabel(_ text: String) -> String {
        text.replacingAll([("\\", "\\\\"), ("\"", "\\\""), ("\n", "\\n")])
    }
}

extension String {
    /// Each character that is a key of `replacements` replaced by its text, in one pass.
    fileprivate func replacingAll(_ replacements: [(Character, String)]) -> String {
        var out = ""
        out.reserveCapacity(utf8.count)
        for character in self {
            if let replacement = replacements.first(where: { $0.0 == character }) {
                out += replacement.1
            } else {
                out.append(character)
            }
        }
        return out
    }
}
