import Foundation
import LogbookJSON
import LogbookWire

/// The `Status` of the process a client talks to, read back as its typed value.
extension DealerClient {
    enum StatusFailure: Error { case refused(JSONObject) }

    func workerStatus() throws -> WorkerStatus { try WorkerStatus(json: try statusResult()) }

    func queryStatus() throws -> QueryStatus { try QueryStatus(json: try statusResult()) }

    private func statusResult() throws -> JSONValue {
        let reply = try request(["id": .string("status-\(UUID().uuidString)"), "type": "Status"])
        guard reply["ok"] == true, let result = reply["result"] else { throw StatusFailure.refused(reply) }
        return result
    }
}

/// Reads `read()` every 20 ms until `done` holds of it, for at most `milliseconds`, and
/// returns the last value read: the test then says what it expected of it.
func eventually<Value>(
    within milliseconds: Int = patienceMilliseconds, _ read: () throws -> Value, until done: (Value) -> Bool
) throws -> Value {
    let deadline = ContinuousClock.now + .milliseconds(milliseconds)
    while true {
        let value = try read()
        if done(value) || ContinuousClock.now >= deadline { return value }
        Thread.sleep(forTimeInterval: 0.02)
    }
}
