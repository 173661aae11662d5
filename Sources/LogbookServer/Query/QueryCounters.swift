import LogbookApplication
import LogbookJSON

/// What the query thread has done since it started: the numbers both `Status` and the
/// metrics are made from. A value; `QueryMetrics` keeps it behind its lock.
struct QueryCounters {
    /// A query's type (one of `QueryParser.queryTypes`, else `other`) and its outcome (`ok`
    /// or the error code it was answered with).
    struct Key: Hashable {
        let type: String
        let outcome: String
    }

    /// Query requests by type and outcome.
    var queries: [Key: Int] = [:]
    /// Queries answered from the read models (whatever the answer), as `Status` counts them.
    var answered = 0
    /// Queries parked until the read models reach their `minPosition`, at the end of the last turn.
    var parked = 0

    /// Counts one query request of wire type `type` whose reply was `outcome`.
    mutating func count(type: String, outcome: String) {
        let known = QueryParser.queryTypes.contains(type) ? type : "other"
        queries[Key(type: known, outcome: outcome), default: 0] += 1
    }

    /// The outcome a reply document says: `ok`, or its error's code.
    static func outcome(of reply: JSONValue) -> String {
        guard case .object(let members) = reply else { return ErrorCode.internal.rawValue }
        if members["ok"] == .bool(true) { return "ok" }
        if case .object(let error)? = members["error"], case .string(let code)? = error["code"] { return code }
        return ErrorCode.internal.rawValue
    }
}
