import LogbookCommandLine

/// The `logbook` command line: one table of commands, each carrying its declaration. It
/// picks the command the first word names and runs it; the overview is made from the same
/// table. The only place that knows every command.
struct Logbook {
    static let version = "0.1.0"

    static let program = ProgramSpec(
        name: "logbook", summary: "an event-sourced store of users, posts, products and orders",
        usage: "<command> [options]", settings: Configuration.settings,
        exitStatus: "0 ok, 1 error reply, 2 bad command line, 3 no reply, or data directory unusable")

    /// Every command, in the order the overview lists them.
    static let commands: [any Subcommand.Type] = [
        UpCommand.self, RunCommand.self,
        SendCommand.self, QueryCommand.self, SubscribeCommand.self, ConsumeCommand.self, GroupsCommand.self,
        ReplayCommand.self, RebuildCommand.self,
        StatusCommand.self, TopCommand.self,
        VerifyCommand.self, BackupCommand.self, MigrateCommand.self,
        KeygenCommand.self,
        BenchForwarder.self,
        HelpCommand.self, VersionCommand.self,
    ]

    static var overview: String { ProgramOverview.text(program, commands: commands.map { $0.spec }) }

    let environment: [String: String]
    let output = StandardStreams(program: Logbook.program.name)
    var runner: CommandRunner { CommandRunner(program: Self.program.name, output: output) }

    func run(_ words: [String]) -> ExitStatus {
        guard let word = words.first else {
            output.out(Self.overview)
            return .usage
        }
        guard let command = Self.command(word) else {
            output.error("unknown command '\(word)'; run 'logbook help' for the list")
            return .usage
        }
        return command.main(Array(words.dropFirst()), in: self)
    }

    /// The command `word` selects, if any.
    static func command(_ word: String) -> (any Subcommand.Type)? {
        commands.first { $0.spec.isCalled(word) }
    }
}
