/// The settings block of help: each shared setting with its environment variable, its
/// default and what it is, under the rule that resolves it.
enum SettingsTable {
    static let heading = "settings (flag, else environment, else default):"

    static func table(_ settings: [OptionSpec]) -> TextTable {
        TextTable(rows: settings.map { [$0.synopsis, $0.environment ?? "", $0.defaultText ?? "", $0.help] })
    }

    /// The heading and the table's lines, or nothing when there are no settings.
    static func lines(_ settings: [OptionSpec], firstColumnWidth: Int = 0) -> [String] {
        settings.isEmpty ? [] : [heading] + table(settings).lines(firstColumnWidth: firstColumnWidth)
    }
}
