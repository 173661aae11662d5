/// The query thread's rule for `Rebuild` requests, as a value with no socket: one rebuild
/// at a time, and once per request id, so a client's retry (the same id on a fresh socket)
/// joins the rebuild it started rather than starting another. It remembers the ids of the
/// last `remembered` requests that started one.
struct RebuildRequests {
    /// What to do with a `Rebuild` request (either way the reply is the status).
    enum Decision: Equatable {
        /// Start a rebuild.
        case start
        /// Start nothing: one is under way, or this id already started one.
        case join
    }

    static var remembered: Int { 64 }

    private var startedBy: [String] = []

    /// A `Rebuild` with `id` arrives; `underWay` says whether a rebuild is running or
    /// switching now (read from the state as it is now, not a turn's snapshot: a request
    /// earlier in the turn may have started one).
    mutating func arrive(id: String, underWay: Bool) -> Decision {
        guard !underWay && !startedBy.contains(id) else { return .join }
        startedBy.append(id)
        if startedBy.count > Self.remembered { startedBy.removeFirst() }
        return .start
    }
}
