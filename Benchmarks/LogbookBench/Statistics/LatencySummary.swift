/// Order statistics of a set of measured durations, in microseconds: nearest-rank
/// percentiles (the smallest sample with at least p% of the samples at or below it), so
/// every percentile reported is a duration that was actually observed.
public struct LatencySummary: Sendable, Equatable {
    public let count: Int
    public let p50: Double
    public let p99: Double
    public let p999: Double
    public let maximum: Double
    public let mean: Double

    /// Summarises samples given in nanoseconds (negative ones allowed: a difference of two
    /// clocks' readings can be); nil when there are none.
    public init?(nanoseconds samples: [Int64]) {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.sorted()
        func micro(_ p: Double) -> Double { Double(Self.percentile(p, ofSorted: sorted) ?? 0) / 1000 }
        count = sorted.count
        p50 = micro(50)
        p99 = micro(99)
        p999 = micro(99.9)
        maximum = Double(sorted[sorted.count - 1]) / 1000
        mean = Double(sorted.reduce(0.0) { $0 + Double($1) }) / Double(sorted.count) / 1000
    }

    /// The nearest-rank `p`th percentile (0 < p ≤ 100) of an ascending array; nil when empty.
    public static func percentile<Value>(_ p: Double, ofSorted sorted: [Value]) -> Value? {
        guard !sorted.isEmpty else { return nil }
        // p × n / 100, rounded up; the small allowance keeps 99.9 × 1000 / 100 at rank 999
        // although the binary floating-point product lands a hair above it.
        let rank = Int((p * Double(sorted.count) / 100 - 1e-9).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }
}
