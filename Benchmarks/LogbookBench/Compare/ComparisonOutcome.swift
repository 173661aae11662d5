/// What the load on a comparison server (Redis, PostgreSQL) observed: appends completed and
/// refused, the span they took, and the first failure that stopped a client.
struct ComparisonOutcome: Sendable {
    var completed = 0
    var errors = 0
    var startedAt: UInt64 = 0
    var endedAt: UInt64 = 0
    var failure: String?

    var perSecond: Double { endedAt > startedAt ? Double(completed) * 1e9 / Double(endedAt - startedAt) : 0 }

    /// The clients' outcomes as one: counts added, the widest span, the first failure.
    static func total(of outcomes: [ComparisonOutcome]) -> ComparisonOutcome {
        var total = ComparisonOutcome()
        for outcome in outcomes {
            total.completed += outcome.completed
            total.errors += outcome.errors
            total.startedAt = total.startedAt == 0 ? outcome.startedAt : min(total.startedAt, outcome.startedAt)
            total.endedAt = max(total.endedAt, outcome.endedAt)
            total.failure = total.failure ?? outcome.failure
        }
        return total
    }
}
