/// What the `logbook` process tells its caller, as documented in the README.
enum ExitStatus: Int32 {
    /// Done; for client commands, the reply was `ok`.
    case success = 0
    /// The service answered with an error reply (printed as JSON on stdout).
    case errorReply = 1
    /// The command line was wrong.
    case usage = 2
    /// The data directory or the log could not be used.
    case unavailable = 3
}
