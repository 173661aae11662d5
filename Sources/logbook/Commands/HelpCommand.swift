import LogbookCommandLine

/// `logbook help [COMMAND]`: the overview, or a command's own help (the same as
/// `logbook COMMAND --help`). A name that is no command gets the overview.
enum HelpCommand: Subcommand {
    static let spec = CommandSpec(
        name: "help", aliases: ["--help", "-h"], usage: "[COMMAND]",
        listings: [.init("help [COMMAND]", "show this text, or a command's options")], section: .about,
        description: "Prints the list of commands, or what COMMAND does and every option it takes.")

    static func main(_ words: [String], in logbook: Logbook) -> ExitStatus {
        logbook.runner.run(spec, words) { arguments throws(CLIError) in
            if let name = arguments.positionals.first, let command = Logbook.command(name) {
                return command.main(["--help"], in: logbook)
            }
            logbook.output.out(Logbook.overview)
            return .success
        }
    }
}
