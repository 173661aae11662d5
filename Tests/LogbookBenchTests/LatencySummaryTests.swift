import LogbookBench
import Testing

@Suite("Bench: latency percentiles")
struct LatencySummaryTests {
    @Test("nearest rank: the p-th percentile of 1…1000 is the p × 10-th value")
    func nearestRank() throws {
        let samples = (1...1_000).map { Int64($0) * 1_000 }.shuffled()
        let summary = try #require(LatencySummary(nanoseconds: samples))
        #expect(summary.count == 1_000)
        #expect(summary.p50 == 500)
        #expect(summary.p99 == 990)
        #expect(summary.p999 == 999)
        #expect(summary.maximum == 1_000)
        #expect(summary.mean == 500.5)
    }

    @Test("a percentile is always a sample; small sets round the rank up")
    func smallSets() {
        #expect(LatencySummary.percentile(50, ofSorted: [7]) == 7)
        #expect(LatencySummary.percentile(99.9, ofSorted: [1, 2, 3]) == 3)
        #expect(LatencySummary.percentile(50, ofSorted: [1, 2, 3, 4]) == 2)
        #expect(LatencySummary.percentile(51, ofSorted: [1, 2, 3, 4]) == 3)
        #expect(LatencySummary.percentile(50, ofSorted: [Int]()) == nil)
        #expect(LatencySummary(nanoseconds: []) == nil)
    }

    @Test("negative samples (one clock read after another's event) keep their sign")
    func negative() throws {
        let summary = try #require(LatencySummary(nanoseconds: [-3_000, -1_000, 2_000, 4_000]))
        #expect(summary.p50 == -1)
        #expect(summary.maximum == 4)
    }
}
