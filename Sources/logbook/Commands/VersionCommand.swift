import LogbookCommandLine

/// `logbook version`: prints `logbook` and its version.
enum VersionCommand: Subcommand {
    static let spec = CommandSpec(
        name: "version", aliases: ["--version"], usage: "", listings: [.init("version", "print the version")],
        section: .about, description: "Prints the version of this logbook executable.")

    static func main(_ words: [String], in logbook: Logbook) -> ExitStatus {
        logbook.runner.run(spec, words) { arguments throws(CLIError) in
            guard arguments.positionals.isEmpty else { throw .usage("version takes no positional arguments") }
            logbook.output.out("logbook \(Logbook.version)")
            return .success
        }
    }
}
