import Foundation

/// How the table writes numbers: thousands separated by commas, precision that suits the
/// size of the number, the unit after it.
enum NumberFormat {
    static func value(_ value: Double, _ unit: BenchFigure.Unit) -> String {
        switch unit {
        case .perSecond: "\(grouped(value))/s"
        case .microseconds:
            value >= 10_000
                ? "\(decimal(value / 1000, places: 1)) ms" : "\(decimal(value, places: value < 100 ? 1 : 0)) µs"
        case .megabytes: "\(decimal(value, places: 1)) MB"
        case .seconds: "\(decimal(value, places: value < 10 ? 2 : 1)) s"
        case .percent: "\(decimal(value, places: value < 10 ? 2 : 1)) %"
        }
    }

    static func ratio(_ ratio: Double) -> String {
        "\(decimal(ratio, places: ratio < 10 ? 2 : 1))×"
    }

    /// A whole number with thousands separated: 1234567.8 → "1,234,568".
    static func grouped(_ value: Double) -> String {
        guard value.isFinite else { return "\(value)" }
        let rounded = Int(value.rounded())
        let digits = String(abs(rounded))
        var groups: [Substring] = []
        var end = digits.endIndex
        while end > digits.startIndex {
            let start = digits.index(end, offsetBy: -3, limitedBy: digits.startIndex) ?? digits.startIndex
            groups.insert(digits[start..<end], at: 0)
            end = start
        }
        return (rounded < 0 ? "-" : "") + groups.joined(separator: ",")
    }

    /// A number with a fixed count of decimals, thousands grouped.
    static func decimal(_ value: Double, places: Int) -> String {
        guard places > 0 else { return grouped(value) }
        let text = String(format: "%.\(places)f", value)
        guard let dot = text.firstIndex(of: ".") else { return text }
        let whole = Double(text[..<dot]) ?? 0
        let sign = text.hasPrefix("-") && whole == 0 ? "-" : ""
        return sign + grouped(whole) + text[dot...]
    }
}
