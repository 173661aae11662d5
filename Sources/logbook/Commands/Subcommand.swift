import LogbookCommandLine

/// A `logbook` command: its declaration, and what it does with the words after its name.
/// Its type is sendable, so the table of commands is a constant any thread may read.
protocol Subcommand: SendableMetatype {
    static var spec: CommandSpec { get }
    static func main(_ words: [String], in logbook: Logbook) -> ExitStatus
}

/// A command that works with the settings (data directory, endpoints, log level): its
/// words are parsed against its declaration, the settings resolved, and it runs once.
protocol ConfiguredCommand: Subcommand {
    init(arguments: Arguments, configuration: Configuration, output: StandardStreams)
    func run() throws(CLIError) -> ExitStatus
}

extension ConfiguredCommand {
    static func main(_ words: [String], in logbook: Logbook) -> ExitStatus {
        logbook.runner.run(spec, words) { arguments throws(CLIError) in
            let configuration = try Configuration(arguments: arguments, environment: logbook.environment)
            return try Self(arguments: arguments, configuration: configuration, output: logbook.output).run()
        }
    }
}
