import LogbookMetrics
import LogbookZMQ
import Synchronization

/// The query process's numbers for its metrics: the query thread's counters (behind their
/// own lock, taken once per query and once per turn) and the state the threads already
/// share (`QueryProcessState`: positions, events applied, rebuild). A scrape copies both
/// under their locks and formats the copies outside them.
final class QueryMetrics: Sendable {
    private let counters = Mutex(QueryCounters())
    private let state: QueryProcessState
    private let started: ProcessStart

    init(state: QueryProcessState, started: ProcessStart) {
        self.state = state
        self.started = started
    }

    func read() -> QueryCounters { counters.withLock { $0 } }

    func update<T>(_ body: (inout QueryCounters) -> T) -> T { counters.withLock { body(&$0) } }

    /// The query process's metric families (`peers` with CURVE on).
    func families(peers: ServerSecurity?) -> [MetricFamily] {
        let snapshot = state.read()
        let counts = read()
        let lag = max(0, snapshot.head - snapshot.applied)
        var rebuildRunning = 0.0
        var rebuildPosition: Int64 = 0
        var rebuildHead: Int64 = 0
        if case .running(_, let position, let head, _) = snapshot.rebuild {
            rebuildRunning = 1
            rebuildPosition = position
            rebuildHead = head
        }
        let queries = counts.queries.sorted { ($0.key.type, $0.key.outcome) < ($1.key.type, $1.key.outcome) }
        var families: [MetricFamily] = [
            .gauge(
                "logbook_query_checkpoint_position", "Every event at or before this position is in the read models.",
                Double(snapshot.applied)),
            .gauge(
                "logbook_query_head_position", "The log's head as the query process last learned it.",
                Double(snapshot.head)),
            .gauge("logbook_query_lag_events", "Events the read models are behind the head.", Double(lag)),
            .gauge(
                "logbook_query_lag_seconds",
                "Seconds since the read models last reached the head they knew (0 when caught up).",
                snapshot.lagSeconds(now: MonotonicClock.milliseconds())),
            .counter(
                "logbook_query_events_applied_total", "Events applied to the read models.", snapshot.eventsApplied),
            .counter(
                "logbook_query_holes_detected_total", "Gaps in the feed filled from the log.", snapshot.holesDetected),
            .counter(
                "logbook_queries_total", "Query requests by type and outcome (ok, or the error code answered).",
                queries.map { ([.init("type", $0.key.type), .init("outcome", $0.key.outcome)], $0.value) }),
            .gauge(
                "logbook_queries_parked", "Queries waiting for the read models to reach their minPosition.",
                Double(counts.parked)),
            .gauge(
                "logbook_read_model_generation", "The read models' generation queries are answered from.",
                Double(snapshot.generation)),
            .gauge("logbook_rebuild_running", "1 while a rebuild fills a new generation, else 0.", rebuildRunning),
            .gauge(
                "logbook_rebuild_position", "How far the running rebuild has applied the log (0 when none runs).",
                Double(rebuildPosition)),
            .gauge(
                "logbook_rebuild_head_position", "The head the running rebuild is heading for (0 when none runs).",
                Double(rebuildHead)),
        ]
        if let peers { families += PeerMetrics.families(peers.peerStatus) }
        return families + started.families()
    }
}
