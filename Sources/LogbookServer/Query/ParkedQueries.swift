import LogbookApplication
import LogbookWire

/// The query thread's rules for queries whose `minPosition` the read models have not
/// reached, as a value with no socket and no clock: each event (a query arrives, a turn
/// ends with the read models at some position) returns what to do, and the caller does it.
/// `Route` is whatever the caller needs to reply (the ROUTER's route; anything in tests).
///
/// It promises: a query is answered only from a reader on the generation whose position
/// was checked (`readable`), never with rows older than its `minPosition`; every parked
/// query is answered or timed out exactly once, in arrival order within a turn; at most
/// `maximum` wait at once (more are refused `unavailable`); and the projection thread is
/// asked to read the log at most once per applied position. Times are monotonic
/// milliseconds the caller passes in.
struct ParkedQueries<Route> {
    /// What to do with a query that just arrived.
    enum Arrival: Equatable {
        /// Its position is reached on a readable reader: answer it now.
        case answerNow
        /// It waits; when `nudge` is set, ask the projection thread to read the log now.
        case park(nudge: Bool)
        /// Too many are waiting already: reply with this error.
        case refuse(ServiceError)
    }

    /// What to do at the end of a turn.
    enum Action {
        /// Its position is reached: answer it from the reader.
        case answer(Route, QueryRequest)
        /// Its deadline passed first: reply with this `timeout` error.
        case timeOut(Route, QueryRequest, ServiceError)
        /// Ask the projection thread to read the log now (the feed may never carry the
        /// position: the event at it may be an email claim, on no topic).
        case nudge
    }

    private struct Entry {
        let route: Route
        let request: QueryRequest
        let deadline: Int64
    }

    /// Queries waiting at most; more are refused with `unavailable`.
    static var maximum: Int { 10_000 }

    private var entries: [Entry] = []
    /// The applied position when the projection thread was last asked to read the log.
    private var nudgedAt: Int64 = -1

    /// How many queries are waiting.
    var count: Int { entries.count }

    /// The earliest deadline of a waiting query, if any waits.
    var nextDeadline: Int64? { entries.lazy.map(\.deadline).min() }

    /// How long to wait for input at `now` before a deadline passes: milliseconds (0 when
    /// one has passed already), or -1 (forever) when nothing waits.
    func pollTimeout(now: Int64) -> Int {
        nextDeadline.map { max(0, Int($0 - now)) } ?? -1
    }

    /// A query arrives while the read models are at `applied`; `readable` says whether the
    /// reader is on the generation `applied` belongs to.
    mutating func arrive(_ request: QueryRequest, route: Route, applied: Int64, readable: Bool, now: Int64) -> Arrival {
        if request.minPosition <= applied && readable { return .answerNow }
        guard entries.count < Self.maximum else {
            return .refuse(
                ServiceError(
                    .unavailable, "\(entries.count) queries are already waiting for positions; try again later"))
        }
        entries.append(Entry(route: route, request: request, deadline: now + Int64(request.timeoutMilliseconds)))
        return .park(nudge: nudge(at: applied))
    }

    /// The turn ends with the read models at `applied`: the waiting queries whose position
    /// is reached are answered (when `readable`), those past their deadline time out, in
    /// arrival order; then, if some still wait, a nudge once per applied position.
    mutating func due(applied: Int64, readable: Bool, now: Int64) -> [Action] {
        guard !entries.isEmpty else { return [] }
        var actions: [Action] = []
        var waiting: [Entry] = []
        for entry in entries {
            if readable && entry.request.minPosition <= applied {
                actions.append(.answer(entry.route, entry.request))
            } else if entry.deadline <= now {
                actions.append(.timeOut(entry.route, entry.request, entry.request.timedOut(at: applied)))
            } else {
                waiting.append(entry)
            }
        }
        entries = waiting
        if !waiting.isEmpty && nudge(at: applied) { actions.append(.nudge) }
        return actions
    }

    /// Whether to ask for a log read at `applied`: only the first time at each position.
    private mutating func nudge(at applied: Int64) -> Bool {
        guard applied > nudgedAt else { return false }
        nudgedAt = applied
        return true
    }
}

extension ParkedQueries.Action: Equatable where Route: Equatable {}
