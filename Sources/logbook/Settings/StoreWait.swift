import Foundation
import LogbookApplication
import LogbookServer

/// How long `run` waits at its start for a PostgreSQL store it cannot reach yet (no server
/// answering, none of the hosts accepting writes during a failover), from `--store-wait`:
/// it tries again with back-off, saying why on stderr each time, and gives up once the time
/// is spent. Only a failure the store calls unavailable is waited out; a malformed string,
/// another program's database or a newer schema stop the start at once.
struct StoreWait {
    /// Zero: the first failure stops the start.
    let seconds: Int

    /// The first pause, in milliseconds; each next one doubles, up to `longestPauseMilliseconds`.
    static let firstPauseMilliseconds = 250
    static let longestPauseMilliseconds = 5_000

    /// `open()`'s value, tried again while its failure may pass and time is left.
    func retrying<Value, Failure: StoreOpeningFailure>(
        _ what: String, diagnostics: Diagnostics, redacting connectionString: String,
        _ open: () throws(Failure) -> Value
    ) throws(Failure) -> Value {
        let deadline = ContinuousClock.now + .seconds(seconds)
        var pause = Self.firstPauseMilliseconds
        while true {
            do {
                return try open()
            } catch {
                guard error.mayPass, ContinuousClock.now + .milliseconds(pause) <= deadline else { throw error }
                diagnostics.warning(
                    "waiting for the \(what)",
                    [
                        "reason": StorageSettings.redacting(connectionString, in: error.description),
                        "retryInMs": String(pause),
                    ])
                Thread.sleep(forTimeInterval: Double(pause) / 1_000)
                pause = min(pause * 2, Self.longestPauseMilliseconds)
            }
        }
    }
}

/// A store's failure to open, which says whether trying again later may succeed.
protocol StoreOpeningFailure: Error, CustomStringConvertible {
    /// The store is unavailable (no server answering, none accepting writes), not refused.
    var mayPass: Bool { get }
}

extension EventStoreError: StoreOpeningFailure {
    var mayPass: Bool { if case .unavailable = self { true } else { false } }
}

extension GroupStoreError: StoreOpeningFailure {
    var mayPass: Bool { if case .unavailable = self { true } else { false } }
}
