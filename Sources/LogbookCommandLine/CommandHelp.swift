/// A command's `--help`, made from its declaration alone: the usage line, the description,
/// every flag it accepts (placeholder, help, default), the settings it shares with the rest
/// of the program, and its exit statuses when it has its own.
public enum CommandHelp {
    public static func text(_ spec: CommandSpec, program: String) -> String {
        let usage = [spec.invocation(program: program), spec.usage].filter { !$0.isEmpty }
        var blocks = [["usage: " + usage.joined(separator: " ")]]
        if !spec.description.isEmpty { blocks.append([spec.description]) }
        let rows = (spec.options + [.help]).map { option in
            [option.synopsis, option.help + (option.defaultText.map { " (default: \($0))" } ?? "")]
        }
        blocks.append(["options:"] + TextTable(rows: rows).lines())
        let settings = SettingsTable.lines(spec.settings)
        if !settings.isEmpty { blocks.append(settings) }
        if let exitStatus = spec.exitStatus { blocks[blocks.count - 1].append("exit status: \(exitStatus)") }
        return blocks.map { $0.joined(separator: "\n") }.joined(separator: "\n\n")
    }
}
