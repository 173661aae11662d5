import LogbookJSON
import LogbookWire

/// What `logbook status --check` finds wrong, one line per failing process: a process that
/// does not answer, one that answers `Status` with an error, and a query process more than
/// `maximumLag` events behind the log's head (the larger of the head it knows and the head
/// the workers reported, so a query process that lost touch with the log still shows its lag).
struct HealthCheck {
    static let defaultMaximumLag = 10_000

    let maximumLag: Int64
    private(set) var problems: [String] = []

    init(maximumLag: Int) {
        self.maximumLag = Int64(maximumLag)
    }

    var isHealthy: Bool { problems.isEmpty }

    /// `role` at `endpoint` did not answer, or not with its status.
    mutating func down(_ role: String, at endpoint: String, _ reason: String) {
        problems.append("\(role) \(endpoint): down: \(reason)")
    }

    /// `role` at `endpoint` answered `Status` with an error reply.
    mutating func refused(_ role: String, at endpoint: String, _ reply: JSONObject) {
        let error = reply["error"]?.objectValue
        let code = error?["code"]?.stringValue ?? "error"
        let message = error?["message"]?.stringValue ?? JSONWriter.string(.object(reply))
        problems.append("\(role) \(endpoint): refused Status: \(code): \(message)")
    }

    /// A worker that answered `Status` but could not read its log's head (`head: null`): it
    /// cannot serve commands either.
    mutating func worker(_ status: WorkerStatus, at endpoint: String) {
        guard status.head == nil else { return }
        problems.append("worker \(endpoint): cannot read its log (Status has no head)")
    }

    /// A query process that answered: too far behind `logHead` (the workers' head, if any answered)?
    mutating func query(_ status: QueryStatus, at endpoint: String, logHead: Int64?) {
        let head = max(status.head, logHead ?? 0)
        let lag = max(0, head - status.checkpoint)
        guard lag > maximumLag else { return }
        problems.append(
            "query \(endpoint): \(lag) events behind the log's head \(head) "
                + "(checkpoint \(status.checkpoint); more than --max-lag \(maximumLag))")
    }
}
