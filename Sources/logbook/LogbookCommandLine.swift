import Foundation
import LogbookApplication
import LogbookJSON
import LogbookSQLite

/// The `logbook` command line: reads the words, wires the pieces a command needs through
/// their initialisers, runs it, and returns the exit status. The only place that knows
/// every layer.
struct LogbookCommandLine {
    let environment: [String: String]
    var output = StandardStreams()

    func run(_ words: [String]) -> ExitStatus {
        guard let command = words.first else {
            output.out(HelpText.overview)
            return .usage
        }
        let rest = Array(words.dropFirst())
        switch command {
        case "help", "--help", "-h":
            output.out(rest.first.flatMap(HelpText.forCommand) ?? HelpText.overview)
            return .success
        case "version", "--version":
            output.out("logbook \(HelpText.version)")
            return .success
        case "send": return runCommand(SendCommand.self, named: command, rest)
        case "replay": return runCommand(ReplayCommand.self, named: command, rest)
        case "verify": return runCommand(VerifyCommand.self, named: command, rest)
        case "run": return runCommand(RunCommand.self, named: command, rest)
        case "up": return runCommand(UpCommand.self, named: command, rest)
        case "subscribe": return runCommand(SubscribeCommand.self, named: command, rest)
        case "query": return runCommand(QueryCommand.self, named: command, rest)
        case "status": return runCommand(StatusCommand.self, named: command, rest)
        case "rebuild": return runCommand(RebuildCommand.self, named: command, rest)
        case "bench": return runCommand(BenchCommand.self, named: command, rest)
        default:
            output.error("unknown command '\(command)'; run 'logbook help' for the list")
            return .usage
        }
    }

    /// Parses the options of one command, shows its help when asked, runs it, and turns
    /// failures into one line on stderr.
    private func runCommand<Command: Subcommand>(_: Command.Type, named name: String, _ words: [String])
        -> ExitStatus
    {
        do throws(CLIError) {
            let arguments = try Arguments(
                words, options: Command.options.union(Configuration.sharedOptions),
                switches: Command.switches.union(["help"]))
            if arguments.switches.contains("help") {
                output.out(HelpText.forCommand(name) ?? HelpText.overview)
                return .success
            }
            let configuration = try Configuration(arguments: arguments, environment: environment)
            return try Command(arguments: arguments, configuration: configuration, output: output).run()
        } catch {
            let hint = error.status == .usage ? " (see 'logbook \(name) --help')" : ""
            output.error("\(name): \(error.message)\(hint)")
            return error.status
        }
    }
}

/// A `logbook` command that works on the data directory: its own options, built from the
/// parsed command line, run once.
protocol Subcommand {
    static var options: Set<String> { get }
    /// Flags that take no value (`--help` is always one).
    static var switches: Set<String> { get }
    init(arguments: Arguments, configuration: Configuration, output: StandardStreams)
    func run() throws(CLIError) -> ExitStatus
}

extension Subcommand {
    static var switches: Set<String> { [] }
}

extension SendCommand: Subcommand {}
extension ReplayCommand: Subcommand {}
extension VerifyCommand: Subcommand {}
extension RunCommand: Subcommand {}
extension UpCommand: Subcommand {}
extension SubscribeCommand: Subcommand {}
extension QueryCommand: Subcommand {}
extension StatusCommand: Subcommand {}
extension RebuildCommand: Subcommand {}
extension BenchCommand: Subcommand {}

/// A failure that ends a command, with the exit status it deserves.
struct CLIError: Error {
    let status: ExitStatus
    let message: String

    static func usage(_ message: String) -> CLIError { CLIError(status: .usage, message: message) }

    static func unavailable(_ message: String) -> CLIError { CLIError(status: .unavailable, message: message) }
}

/// Where a command's output goes: JSON documents to stdout, one-line diagnostics to stderr.
struct StandardStreams {
    func out(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    func out(bytes: [UInt8]) {
        FileHandle.standardOutput.write(Data(bytes))
    }

    func error(_ text: String) {
        FileHandle.standardError.write(Data("logbook: error: \(text)\n".utf8))
    }
}

extension Configuration {
    /// Opens the event log in the data directory, creating both when `create` is set.
    func openEventLog(create: Bool) throws(CLIError) -> SQLiteEventStore {
        if !create && !FileManager.default.fileExists(atPath: eventLogPath) {
            throw .unavailable("no event log at \(eventLogPath) (set --data-dir or LOGBOOK_DATA_DIR)")
        }
        try ensureDataDirectory()
        do {
            return try SQLiteEventStore(path: eventLogPath, evolution: .standard)
        } catch {
            throw .unavailable(error.description)
        }
    }
}
