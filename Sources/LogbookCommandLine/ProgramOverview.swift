/// What `PROGRAM help` prints, made from the declarations: the program's name and summary,
/// its usage, its commands block by block in the order given, the shared settings with
/// their environment variables and defaults, and the exit statuses.
public enum ProgramOverview {
    public static func text(_ program: ProgramSpec, commands: [CommandSpec]) -> String {
        var sections: [CommandSpec.Section?] = []
        for spec in commands where !sections.contains(spec.section) { sections.append(spec.section) }
        let tables = sections.map { section in
            TextTable(
                rows: commands.filter { $0.section == section }.flatMap(\.listings).map { [$0.label, $0.summary] })
        }
        let settings = SettingsTable.table(program.settings)
        let width = (tables + [settings]).compactMap(\.columnWidths.first).max() ?? 0
        var blocks = [["\(program.name) — \(program.summary)"], ["usage: \(program.name) \(program.usage)"]]
        for (section, table) in zip(sections, tables) {
            let heading = section?.title.map { ["\($0):"] } ?? []
            blocks.append(heading + table.lines(firstColumnWidth: width))
        }
        blocks.append(
            SettingsTable.lines(program.settings, firstColumnWidth: width) + ["exit status: \(program.exitStatus)"])
        return blocks.map { $0.joined(separator: "\n") }.joined(separator: "\n\n")
    }
}
