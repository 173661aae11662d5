import LogbookCommandLine
import LogbookFeed
import LogbookZMQ

/// How long a client command waits for each reply (`--timeout-ms`, default 5000) and how
/// many times it tries (`--attempts`, default 3) before it gives up with exit status 3.
/// A command that follows (`subscribe`) declares `--attempts` as `followingAttempts`: by
/// default it never gives up (`attempts` is `Int.max`).
struct ClientPatience {
    static let defaultTimeoutMilliseconds = 5_000
    static let defaultAttempts = 3
    /// The flags of every client command.
    static let options: [OptionSpec] = [.timeout, .attempts]
    /// The flags of a command that follows until stopped.
    static let followingOptions: [OptionSpec] = [.timeout, .followingAttempts]

    let timeoutMilliseconds: Int
    let attempts: Int

    /// The patience the flags ask for; `following` for a command declaring `followingOptions`.
    init(_ arguments: Arguments, following: Bool = false) throws(CLIError) {
        timeoutMilliseconds = try arguments.integer(.timeout, in: 1...600_000) ?? Self.defaultTimeoutMilliseconds
        if following {
            attempts = try arguments.integer(.followingAttempts, in: 1...1_000_000) ?? Int.max
        } else {
            attempts = try arguments.integer(.attempts, in: 1...100) ?? Self.defaultAttempts
        }
    }

    /// Runs `body` again (up to `attempts` times in all) while the log socket does not answer.
    func retrying<T>(_ body: () throws(FeedFollowError) -> T) throws(FeedFollowError) -> T {
        var attempt = 1
        while true {
            do {
                return try body()
            } catch .logUnavailable where attempt < attempts {
                attempt += 1
            }
        }
    }
}

extension OptionSpec {
    static let timeout = OptionSpec.option(
        "timeout-ms", "N", "wait this long for each attempt", default: "\(ClientPatience.defaultTimeoutMilliseconds)")
    static let attempts = OptionSpec.option(
        "attempts", "N", "try this many times, on a fresh socket each time",
        default: "\(ClientPatience.defaultAttempts)")
    static let followingAttempts = OptionSpec.option(
        "attempts", "N", "give up (exit status 3) after N log reads in a row go unanswered",
        default: "never: wait for the worker and go on, like tail -f")
}
