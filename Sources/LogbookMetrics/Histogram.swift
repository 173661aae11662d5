/// Observations counted into fixed buckets, as Prometheus histograms keep them: each
/// bucket's upper bound (`le`), how many observations fell at or below it (cumulative, the
/// last one `+Inf` being the total), their sum and their count. A value: its owner keeps
/// it behind whatever lock it uses and hands out copies.
public struct Histogram: Sendable, Equatable {
    /// The buckets' upper bounds, ascending; `+Inf` is implied after the last.
    public let bounds: [Double]
    /// Per bucket (one more than `bounds`, the last for `+Inf`), the observations in it alone.
    private var perBucket: [UInt64]
    public private(set) var sum: Double = 0
    public private(set) var count: UInt64 = 0

    /// Buckets with these upper bounds (sorted, finite, at least one).
    public init(bounds: [Double]) {
        precondition(!bounds.isEmpty && bounds == bounds.sorted() && bounds.allSatisfy(\.isFinite), "bad bounds")
        self.bounds = bounds
        perBucket = Array(repeating: 0, count: bounds.count + 1)
    }

    /// Counts `value` `times` times (a batch of commands that all waited as long).
    public mutating func observe(_ value: Double, times: Int = 1) {
        guard times > 0 else { return }
        let index = bounds.firstIndex { value <= $0 } ?? bounds.count
        perBucket[index] += UInt64(times)
        sum += value * Double(times)
        count += UInt64(times)
    }

    /// For each bound, then `+Inf`: the observations at or below it.
    public var cumulativeCounts: [UInt64] {
        var running: UInt64 = 0
        return perBucket.map { count in
            running += count
            return running
        }
    }

    /// Seconds: from 0.0001 s to 10 s, for command and commit latencies.
    public static let latencySeconds: [Double] = [
        0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
    ]
    /// Commands per group commit: 1 to the worker's largest batch (2,048).
    public static let batchSizes: [Double] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1_024, 2_048]
}
