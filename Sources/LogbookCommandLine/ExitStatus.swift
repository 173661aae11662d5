/// What a Logbook executable tells its caller, as the README documents it. Every command
/// of `logbook` and `logbook-bench` ends with one of these.
public enum ExitStatus: Int32, Sendable {
    /// Done; for client commands, the reply was `ok`.
    case success = 0
    /// The service answered with an error reply (printed as JSON on stdout), or a check
    /// found what it looks for.
    case errorReply = 1
    /// The command line was wrong.
    case usage = 2
    /// Something the command needs could not be used: the data directory, the log, a
    /// server that does not answer, an executable that is missing.
    case unavailable = 3
}
