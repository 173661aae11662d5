import Testing

@testable import LogbookMetrics

@Suite("The exposition writer")
struct ExpositionWriterTests {
    @Test("a counter and a gauge: HELP, TYPE, then the value; whole numbers without a decimal point")
    func counterAndGauge() {
        let text = ExpositionWriter.text([
            .counter("logbook_commands_accepted_total", "Commands accepted.", 42),
            .gauge("logbook_query_lag_seconds", "How far behind.", 0.25),
        ])
        #expect(
            text == """
                # HELP logbook_commands_accepted_total Commands accepted.
                # TYPE logbook_commands_accepted_total counter
                logbook_commands_accepted_total 42
                # HELP logbook_query_lag_seconds How far behind.
                # TYPE logbook_query_lag_seconds gauge
                logbook_query_lag_seconds 0.25

                """)
    }

    @Test("labels are written in order and their values escaped; help text is escaped")
    func escaping() {
        let family = MetricFamily.counter(
            "logbook_x_total", "a \\ backslash\nand a newline",
            [([.init("code", "a\"b\\c\nd"), .init("type", "T")], 3)])
        #expect(
            ExpositionWriter.text([family]) == """
                # HELP logbook_x_total a \\\\ backslash\\nand a newline
                # TYPE logbook_x_total counter
                logbook_x_total{code="a\\"b\\\\c\\nd",type="T"} 3

                """)
    }

    @Test("a histogram: cumulative buckets ending with +Inf, then _sum and _count")
    func histogram() {
        var histogram = Histogram(bounds: [0.001, 0.01, 1])
        histogram.observe(0.0005)
        histogram.observe(0.005, times: 3)
        histogram.observe(2)
        #expect(histogram.cumulativeCounts == [1, 4, 4, 5])
        #expect(histogram.count == 5)
        #expect(abs(histogram.sum - 2.0155) < 1e-12)
        let text = ExpositionWriter.text([.histogram("logbook_commit_seconds", "Commit time.", histogram)])
        #expect(
            text == """
                # HELP logbook_commit_seconds Commit time.
                # TYPE logbook_commit_seconds histogram
                logbook_commit_seconds_bucket{le="0.001"} 1
                logbook_commit_seconds_bucket{le="0.01"} 4
                logbook_commit_seconds_bucket{le="1"} 4
                logbook_commit_seconds_bucket{le="+Inf"} 5
                logbook_commit_seconds_sum \(2.0155 as Double)
                logbook_commit_seconds_count 5

                """)
    }

    @Test("a value on a bound falls in that bucket; nothing observed is all zeros")
    func boundaries() {
        var histogram = Histogram(bounds: [1, 2])
        #expect(histogram.cumulativeCounts == [0, 0, 0])
        histogram.observe(1)
        histogram.observe(2)
        histogram.observe(0, times: 0)
        #expect(histogram.cumulativeCounts == [1, 2, 2])
        #expect(histogram.count == 2)
    }

    @Test("numbers: infinities, NaN, whole numbers, fractions")
    func numbers() {
        #expect(ExpositionWriter.number(.infinity) == "+Inf")
        #expect(ExpositionWriter.number(-.infinity) == "-Inf")
        #expect(ExpositionWriter.number(.nan) == "NaN")
        #expect(ExpositionWriter.number(3) == "3")
        #expect(ExpositionWriter.number(-7) == "-7")
        #expect(ExpositionWriter.number(0.0001) == "0.0001")
        #expect(ExpositionWriter.number(1.5e20) == "1.5e+20")
    }
}
