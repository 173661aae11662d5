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
        case "send":
            return runCommand("send", rest, options: SendCommand.options) { arguments, configuration throws(CLIError) in
                try SendCommand(arguments: arguments, configuration: configuration, output: output).run()
            }
        case "replay":
            return runCommand("replay", rest, options: ReplayCommand.options) {
                arguments, configuration throws(CLIError) in
                try ReplayCommand(arguments: arguments, configuration: configuration, output: output).run()
            }
        case "verify":
            return runCommand("verify", rest, options: VerifyCommand.options) {
                arguments, configuration throws(CLIError) in
                try VerifyCommand(arguments: arguments, configuration: configuration, output: output).run()
            }
        default:
            output.error("unknown command '\(command)'; run 'logbook help' for the list")
            return .usage
        }
    }

    /// Parses the options of one command, shows its help when asked, and turns failures into one line on stderr.
    private func runCommand(
        _ name: String, _ words: [String], options: Set<String>,
        _ body: (Arguments, Configuration) throws(CLIError) -> ExitStatus
    ) -> ExitStatus {
        do throws(CLIError) {
            let arguments = try Arguments(words, options: options.union(["data-dir"]))
            if arguments.switches.contains("help") {
                output.out(HelpText.forCommand(name) ?? HelpText.overview)
                return .success
            }
            return try body(arguments, Configuration(arguments: arguments, environment: environment))
        } catch {
            let hint = error.status == .usage ? " (see 'logbook \(name) --help')" : ""
            output.error("\(name): \(error.message)\(hint)")
            return error.status
        }
    }
}

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
        do {
            try ensureDataDirectory()
        } catch {
            throw .unavailable("cannot create the data directory \(dataDirectory): \(error.localizedDescription)")
        }
        do {
            return try SQLiteEventStore(path: eventLogPath)
        } catch {
            throw .unavailable(error.description)
        }
    }
}
