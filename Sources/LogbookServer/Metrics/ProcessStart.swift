import LogbookApplication
import LogbookDomain
import LogbookMetrics

/// When a process started, by the clock it was given, for its start-time and uptime metrics.
struct ProcessStart: Sendable {
    private let clock: any Clock
    private let startedAtMilliseconds: Int64

    /// Starts counting now.
    init(_ clock: any Clock) {
        self.clock = clock
        startedAtMilliseconds = clock.now().millisecondsSinceEpoch
    }

    func families() -> [MetricFamily] {
        [
            .gauge(
                "logbook_start_time_seconds", "When the process started, in seconds since the Unix epoch.",
                Double(startedAtMilliseconds) / 1000),
            .gauge(
                "logbook_uptime_seconds", "How long the process has run.",
                Double(clock.now().millisecondsSinceEpoch - startedAtMilliseconds) / 1000),
        ]
    }
}
