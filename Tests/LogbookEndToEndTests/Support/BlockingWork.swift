import Foundation
import LogbookClient
import LogbookJSON
import LogbookWire
import LogbookZMQ
import Synchronization
import Testing

/// The upper bound of a wait for something that must happen (a process starting or ending, a
/// line printed, a position reached): far beyond what it takes on a loaded machine, so that
/// only a broken property runs it out, never a slow machine. Every wait ends as soon as what
/// it waits for happens, so a passing test never waits this long.
let patience: Duration = .seconds(120)

/// How many times `answersStatus` asks: with its doubling timeouts, about four minutes.
let statusAttempts = 35

/// The longest a query may wait for its `minPosition` (the wire's largest `timeoutMs`), used
/// where a test waits for the read models to reach a position.
let patientQueryMilliseconds = QueryRequest.maximumTimeoutMilliseconds

/// Waits until `condition` holds, checking every 20 ms, for at most `timeout` (an upper
/// bound for waiting, never a measurement). Returns whether it came to hold.
@discardableResult
func eventually(
    within timeout: Duration = patience, _ condition: @Sendable () async throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while true {
        if try await condition() { return true }
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(20))
    }
}

/// A value several threads share.
final class Shared<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>

    init(_ value: Value) { storage = Mutex(value) }

    var value: Value { storage.withLock { $0 } }

    @discardableResult
    func update<T: Sendable>(_ body: (inout Value) -> T) -> T { storage.withLock { body(&$0) } }
}

/// UTF-8 bytes of a string.
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// A JSON document as bytes.
func bytes(_ value: JSONValue) -> [UInt8] { JSONWriter.bytes(value) }

/// Waits until both the worker and the query process at `cluster`'s endpoints answer
/// `Status` (the processes `up` started); returns whether they did.
func bothAnswer(_ cluster: ServiceCluster) async -> Bool {
    guard await answersStatus(cluster, .commands) else { return false }
    return await answersStatus(cluster, .queries)
}

/// Asks `server` at `cluster`'s endpoints for its `Status` until it answers, at most
/// `statusAttempts` times, and returns whether it did; `stillWorthIt` is checked before each
/// attempt (a process that ended will never answer). Each attempt is made on a fresh client
/// whose timeout doubles, from a quarter of a second to eight: a fixed short one might never
/// be met on a loaded machine, where connecting alone can take longer. Attempts are counted,
/// not a deadline kept: a test whose task waited long for a thread (the pool busy with other
/// tests' work) still gets its attempts once it runs.
func answersStatus(
    _ cluster: ServiceCluster, _ server: ServerEndpoint, at endpoints: ClientEndpoints? = nil,
    stillWorthIt: () -> Bool = { true }
) async -> Bool {
    var attemptTimeout: Duration = .milliseconds(250)
    for _ in 0..<statusAttempts {
        guard stillWorthIt(),
            let client = try? LogbookClient(
                endpoints: endpoints ?? cluster.endpoints, timeout: attemptTimeout, attempts: 1,
                security: cluster.clientKeys)
        else { return false }
        let answered = (try? await client.status(of: server)) != nil
        client.close()
        if answered { return true }
        attemptTimeout = min(attemptTimeout * 2, .seconds(8))
    }
    return false
}
