import LogbookMetrics
import LogbookZMQ
import Synchronization

/// A feed process's numbers for its metrics: what its publishing loop has published and
/// how far, kept in atomics the loop stores into once per page and a scrape loads.
final class FeedMetrics: Sendable {
    private let published = Atomic<Int>(0)
    private let position = Atomic<Int64>(0)
    private let started: ProcessStart
    /// The feed's subscribers.
    let subscribers = ConnectionCount()

    init(started: ProcessStart) { self.started = started }

    /// A page went out: `messages` sent, every event up to `through` published.
    func recordPage(messages: Int, through: Int64) {
        published.add(messages, ordering: .relaxed)
        position.store(through, ordering: .relaxed)
    }

    func families() -> [MetricFamily] {
        [
            .counter(
                "logbook_feed_messages_published_total",
                "Feed messages published (events of internal categories have none).",
                published.load(ordering: .relaxed)),
            .gauge(
                "logbook_feed_subscribers", "Connections to the feed socket (query processes, subscribers).",
                Double(subscribers.connected)),
            .gauge(
                "logbook_feed_position", "Every event at or before this position has been published.",
                Double(position.load(ordering: .relaxed))),
        ] + started.families()
    }
}
