/// Runs one command the way every command of a program runs: parses its words against its
/// declaration, prints its generated help for `--help`, otherwise runs `body`, and turns a
/// failure into one line on stderr (with a pointer to `--help` for a bad command line).
public struct CommandRunner: Sendable {
    /// The program's name, as usage lines and hints show it.
    public let program: String
    public let output: StandardStreams

    public init(program: String, output: StandardStreams) {
        self.program = program
        self.output = output
    }

    public func run(
        _ spec: CommandSpec, _ words: [String], body: (Arguments) throws(CLIError) -> ExitStatus
    ) -> ExitStatus {
        do throws(CLIError) {
            let arguments = try Arguments(words, for: spec)
            if arguments.isSet(.help) {
                output.out(CommandHelp.text(spec, program: program))
                return .success
            }
            return try body(arguments)
        } catch {
            let label = spec.name.map { "\($0): " } ?? ""
            let hint = error.status == .usage ? " (see '\(spec.invocation(program: program)) --help')" : ""
            output.error("\(label)\(error.message)\(hint)")
            return error.status
        }
    }
}
