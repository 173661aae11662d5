/// A failure that ends a command: one line for stderr and the exit status it deserves.
public struct CLIError: Error, Sendable {
    public let status: ExitStatus
    public let message: String

    public init(status: ExitStatus, message: String) {
        self.status = status
        self.message = message
    }

    /// The command line is wrong (exit 2).
    public static func usage(_ message: String) -> CLIError { CLIError(status: .usage, message: message) }

    /// Something the command needs cannot be used (exit 3).
    public static func unavailable(_ message: String) -> CLIError { CLIError(status: .unavailable, message: message) }
}
