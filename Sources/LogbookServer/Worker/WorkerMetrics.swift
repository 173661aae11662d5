import LogbookApplication
import LogbookMetrics
import LogbookZMQ
import Synchronization

/// The worker's statistics shared between its command loop, which records each batch (a
/// lock or two per batch, never per command), and whoever reads them: the loop itself for
/// `Status`, and the metrics endpoint's thread for a scrape, which copies them under the
/// lock and formats the copy outside it.
final class WorkerMetrics: Sendable {
    private let statistics: Mutex<WorkerStatistics>
    private let started: ProcessStart
    /// The feed's subscribers (a SQLite worker's own feed; none on PostgreSQL, whose feed
    /// processes publish).
    let subscribers = ConnectionCount()

    init(security: ServerSecurity?, started: ProcessStart) {
        var initial = WorkerStatistics()
        initial.security = security
        statistics = Mutex(initial)
        self.started = started
    }

    /// A copy of the numbers as they are now, with the feed's subscribers.
    func read() -> WorkerStatistics {
        var copy = statistics.withLock { $0 }
        copy.subscribers = subscribers.connected
        return copy
    }

    func update<T>(_ body: (inout WorkerStatistics) -> T) -> T { statistics.withLock { body(&$0) } }

    /// One append's duration, from `TimedEventStore`.
    func observeCommit(seconds: Double) {
        statistics.withLock { $0.commitSeconds.observe(seconds) }
    }

    /// The worker's metric families, from one copy of its statistics.
    func families() -> [MetricFamily] {
        let now = read()
        var families: [MetricFamily] = [
            .counter(
                "logbook_commands_accepted_total", "Commands accepted (retries of an accepted command included).",
                now.accepted),
            .counter(
                "logbook_commands_rejected_total",
                "Commands rejected, refused requests included, by error code.",
                ErrorCode.allCases.map { ([.init("code", $0.rawValue)], now.rejectedByCode[$0.rawValue] ?? 0) }),
            .counter(
                "logbook_commands_retried_total",
                "Commands whose id was already recorded: answered with the first outcome, nothing appended.",
                now.retries),
            .counter(
                "logbook_commands_decided_again_total",
                "Commands decided again after their record met a conflict (another writer changed what they read,"
                    + " or a stream taken as new already existed).",
                now.decidedAgain),
            .histogram("logbook_batch_commands", "Commands per group commit.", now.batchSizes),
            .histogram(
                "logbook_commit_duration_seconds", "Time each group commit (one append transaction) took.",
                now.commitSeconds),
            .histogram(
                "logbook_command_duration_seconds",
                "Time from taking a command off the socket to sending its reply.", now.commandSeconds),
            .counter("logbook_events_appended_total", "Events this worker's commits appended.", now.eventsAppended),
            .counter(
                "logbook_feed_messages_published_total",
                "Feed messages published (events of internal categories have none).", now.published),
            .gauge(
                "logbook_feed_subscribers", "Connections to the feed socket (query processes, subscribers).",
                Double(now.subscribers)),
            .gauge(
                "logbook_log_head_position", "The log's head as this worker last saw it (at start, after each commit).",
                Double(now.head)),
        ]
        if let peers = now.security?.peerStatus { families += PeerMetrics.families(peers) }
        return families + started.families()
    }
}
