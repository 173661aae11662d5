public import LogbookMetrics

/// A process that can say its metrics: a fresh list of families for each scrape, read
/// only from what its threads share behind locks, so any thread may call it.
public protocol MetricsSource: Sendable {
    func metricFamilies() -> [MetricFamily]
}
