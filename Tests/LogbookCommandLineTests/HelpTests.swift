import Foundation
import LogbookCommandLine
import Testing

/// Help made from declarations: a command's `--help` and a program's overview.
@Suite("Help generated from the declarations")
struct HelpTests {
    static let settings: [OptionSpec] = [
        .option("data-dir", "DIR", "where the files are", default: "./.x", environment: "X_DATA_DIR"),
        .option("level", "L", "how much to say", default: "info", environment: "X_LEVEL"),
    ]
    static let copy = CommandSpec(
        name: "copy", usage: "FROM TO [options]", listings: [.init("copy FROM TO", "copy a thing")],
        section: .init("work", title: "work"),
        description: "Copies FROM to TO.\nSecond line.",
        options: [
            .option("limit", "N", "stop after N things", default: "100"),
            .flag("dry-run", "say what would be copied"),
            .option(
                "mode", "MODE",
                "a long explanation of the mode that goes on and on well past the width of one terminal line, "
                    + "so that it has to be wrapped onto a second line under the first"),
        ],
        settings: settings, exitStatus: "0 copied, 3 not copied")

    @Test("a command's help shows its usage, description, every flag with placeholder, help and default")
    func commandHelp() {
        let text = CommandHelp.text(Self.copy, program: "tool")
        #expect(text.hasPrefix("usage: tool copy FROM TO [options]\n\nCopies FROM to TO.\nSecond line.\n\noptions:\n"))
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("  --limit N ") && $0.hasSuffix("stop after N things (default: 100)") })
        #expect(lines.contains { $0.hasPrefix("  --dry-run ") && $0.hasSuffix("say what would be copied") })
        #expect(lines.contains { $0.hasPrefix("  --help ") && $0.hasSuffix("print this text") })
        for option in Self.copy.accepted {
            #expect(text.contains(option.synopsis), "\(option.synopsis) missing from:\n\(text)")
        }
        #expect(text.hasSuffix("\nexit status: 0 copied, 3 not copied"))
    }

    @Test("help's flag column lines up, and a long help wraps under its own column")
    func alignmentAndWrapping() throws {
        let lines = CommandHelp.text(Self.copy, program: "tool").split(separator: "\n").map(String.init)
        func column(_ option: OptionSpec) throws -> Int {
            let line = try #require(lines.first { $0.hasPrefix("  \(option.synopsis) ") })
            return try #require(line.range(of: String(option.help.prefix(8)))).lowerBound.utf16Offset(in: line)
        }
        let columns = try (Self.copy.options + [.help]).map(column)
        #expect(Set(columns).count == 1, "\(lines)")
        let mode = try #require(lines.firstIndex { $0.hasPrefix("  --mode MODE") })
        let next = lines[mode + 1]
        #expect(next.prefix(columns[0]).allSatisfy { $0 == " " } && next.dropFirst(columns[0]).first != " ", "\(next)")
        #expect(lines.allSatisfy { $0.count <= 96 })
    }

    @Test("settings show their environment variable and default under the rule that picks them")
    func settingsInHelp() {
        let text = CommandHelp.text(Self.copy, program: "tool")
        #expect(text.contains("\nsettings (flag, else environment, else default):\n"))
        let row = text.split(separator: "\n").first { $0.hasPrefix("  --data-dir DIR") }
        #expect(row?.contains("X_DATA_DIR") == true && row?.contains("./.x") == true)
        #expect(row?.hasSuffix("where the files are") == true)
    }

    @Test("a command with no name is the program itself; an empty usage adds nothing")
    func programCommand() {
        let whole = CommandSpec(name: nil, usage: "[options]", description: "Does it.")
        #expect(CommandHelp.text(whole, program: "tool").hasPrefix("usage: tool [options]\n\nDoes it.\n\noptions:\n"))
        let bare = CommandSpec(name: "version", usage: "", description: "")
        #expect(CommandHelp.text(bare, program: "tool").hasPrefix("usage: tool version\n\noptions:\n  --help"))
    }

    @Test("the overview lists commands block by block, untitled blocks apart, then settings and exit statuses")
    func overview() {
        let program = ProgramSpec(
            name: "tool", summary: "does things", usage: "<command> [options]", settings: Self.settings,
            exitStatus: "0 ok, 2 bad command line")
        let other = CommandSpec.Section("other", title: nil)
        let last = CommandSpec.Section("last", title: nil)
        let commands = [
            Self.copy,
            CommandSpec(
                name: "move", usage: "", listings: [.init("move", "move a thing")], section: Self.copy.section,
                description: ""),
            CommandSpec(
                name: "run", usage: "", listings: [.init("run a", "first"), .init("run b", "second")],
                section: other, description: ""),
            CommandSpec(name: "help", usage: "", listings: [.init("help", "this")], section: last, description: ""),
        ]
        let text = ProgramOverview.text(program, commands: commands)
        #expect(
            text == """
                tool — does things

                usage: tool <command> [options]

                work:
                  copy FROM TO    copy a thing
                  move            move a thing

                  run a           first
                  run b           second

                  help            this

                settings (flag, else environment, else default):
                  --data-dir DIR  X_DATA_DIR  ./.x  where the files are
                  --level L       X_LEVEL     info  how much to say
                exit status: 0 ok, 2 bad command line
                """)
    }
}
