import Glibc
import LogbookCommandLine
import LogbookFeed
import LogbookZMQ

/// How `subscribe` waits for a log socket that does not answer (the worker down or
/// restarting): it says so on stderr, pauses with back-off (`firstPauseMilliseconds`,
/// doubling up to `longestPauseMilliseconds`) and tries again with its cursor unchanged, so
/// nothing is skipped or repeated; after `attempts` unanswered reads in a row (`Int.max`:
/// never) it gives up with the last error.
struct FollowRetry {
    static let firstPauseMilliseconds = 250
    static let longestPauseMilliseconds = 5_000

    let attempts: Int
    let endpoint: String
    let output: StandardStreams
    /// Unanswered reads in a row.
    private(set) var failures = 0

    init(attempts: Int, endpoint: String, output: StandardStreams) {
        self.attempts = attempts
        self.endpoint = endpoint
        self.output = output
    }

    /// The pause after the `failures`-th unanswered read in a row.
    static func pauseMilliseconds(after failures: Int) -> Int {
        min(firstPauseMilliseconds << min(max(failures - 1, 0), 8), longestPauseMilliseconds)
    }

    /// A read went unanswered: throws `error` when the attempts are spent, else says it
    /// waits and pauses.
    mutating func failed(_ error: FeedFollowError) throws(FeedFollowError) {
        failures += 1
        guard failures < attempts else { throw error }
        let pause = Self.pauseMilliseconds(after: failures)
        output.note("subscribe: waiting for the log at \(endpoint) (\(error)); trying again in \(pause) ms")
        usleep(UInt32(pause * 1_000))
    }

    /// A read was answered: says so if it had been waiting.
    mutating func succeeded() {
        if failures > 0 { output.note("subscribe: the log at \(endpoint) answers again; following") }
        failures = 0
    }
}
