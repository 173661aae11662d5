import LogbookBench
import LogbookJSON
import Testing

@Suite("Bench: figures, ratios and the report")
struct ReportTests {
    static let machine = MachineInfo(
        processors: 2, cpuModel: "Test CPU", memoryMegabytes: 4_096, kernel: "6.1.0", swift: "6.3", build: "debug",
        gitCommit: "0123456789abcdef")

    static func report(_ figures: [BenchFigure], failures: [String] = []) -> BenchReport {
        BenchReport(
            figures: figures, machine: machine, commandLine: "logbook bench --quick", startedAt: "2025-01-01T00:00:00Z",
            seconds: 12.5, settings: ["quick": true], loadBefore: "0.10 0.20 0.30", loadAfter: "1.00 0.50 0.40",
            failures: failures)
    }

    static let throughput = BenchFigure(
        section: "throughput", name: "commands/s, 64 clients", value: 36_000, unit: .perSecond,
        baselines: [.init("SQLite inserts", 48_000), .init("bare echo", 144_000)],
        target: .init(.atLeast, 30_000, "≥ 30,000/s"),
        details: ["meanBatch": .double(312.5), "seconds": .double(5.123456789)])

    @Test("the ratio is figure ÷ baseline, and the target decides met")
    func ratioAndTarget() {
        let figure = Self.throughput
        #expect(figure.ratio(to: figure.baselines[0]) == 0.75)
        #expect(figure.ratio(to: figure.baselines[1]) == 0.25)
        #expect(figure.met == true)
        var slower = figure
        slower.value = 29_999
        #expect(slower.met == false)
        let latency = BenchFigure(
            section: "latency", name: "p50", value: 700, unit: .microseconds, target: .init(.atMost, 650, "≤ 650 µs"))
        #expect(latency.met == false)
        #expect(
            BenchFigure.skipped(section: "compare", name: "Redis", unit: .perSecond, because: "not installed").met
                == nil)
        #expect(figure.ratio(to: .init("zero", 0)) == nil)
    }

    @Test("the JSON holds the machine, the command line and every figure with baselines, ratio, target and met")
    func jsonShape() throws {
        let skipped = BenchFigure.skipped(
            section: "compare", name: "Redis", unit: .perSecond, because: "redis-server not installed")
        let report = Self.report([Self.throughput, skipped], failures: ["feed: no reply"])
        let parsed = try JSONParser.parse(report.jsonText)
        let object = try #require(parsed.objectValue)
        #expect(object["commandLine"] == "logbook bench --quick")
        #expect(object["machine"]?.objectValue?["processors"] == 2)
        #expect(object["machine"]?.objectValue?["gitCommit"] == "0123456789abcdef")
        #expect(object["loadAverage"]?.objectValue?["before"] == "0.10 0.20 0.30")
        #expect(object["machineStealPercent"] == .null)
        var stolen = report
        stolen.stealPercent = 16.91234
        #expect(try JSONParser.parse(stolen.jsonText).objectValue?["machineStealPercent"] == .double(16.9123))
        #expect(object["failures"] == ["feed: no reply"])
        let figures = try #require(object["figures"]?.arrayValue)
        #expect(figures.count == 2)
        let first = try #require(figures[0].objectValue)
        #expect(first["section"] == "throughput")
        #expect(first["value"] == .double(36_000))
        #expect(first["unit"] == "/s")
        #expect(first["met"] == true)
        #expect(first["target"]?.objectValue?["bound"] == "atLeast")
        #expect(first["target"]?.objectValue?["threshold"] == .double(30_000))
        let baselines = try #require(first["baselines"]?.arrayValue)
        #expect(baselines[0].objectValue?["name"] == "SQLite inserts")
        #expect(baselines[0].objectValue?["ratio"] == .double(0.75))
        #expect(first["details"]?.objectValue?["meanBatch"] == .double(312.5))
        #expect(first["details"]?.objectValue?["seconds"] == .double(5.1235))
        let second = try #require(figures[1].objectValue)
        #expect(second["value"] == .null)
        #expect(second["note"] == "skipped: redis-server not installed")
        #expect(second["met"] == nil)
    }

    @Test("the table shows each figure, its baselines with their ratio, the target and whether it is met")
    func table() {
        let text = Self.report([Self.throughput]).tableText
        #expect(text.contains("logbook bench --quick"))
        #expect(text.contains("2 × Test CPU"))
        let lines = text.split(separator: "\n")
        let figureLine = lines.first { $0.hasPrefix("commands/s, 64 clients") }
        #expect(figureLine?.contains("36,000/s") == true)
        #expect(figureLine?.contains("≥ 30,000/s") == true)
        #expect(figureLine?.hasSuffix("yes") == true)
        let baselineLine = lines.first { $0.contains("vs SQLite inserts") }
        #expect(baselineLine?.contains("48,000/s") == true)
        #expect(baselineLine?.contains("0.75×") == true)
        #expect(text.contains("meanBatch 312.5"))
        #expect(text.contains("steal: not readable"))
    }

    @Test("the table says how much processor time the host took, and warns when it was noticeable")
    func stealLine() {
        var report = Self.report([Self.throughput])
        report.stealPercent = 0.4
        let quiet = report.tableText.split(separator: "\n").first { $0.hasPrefix("steal") }
        #expect(quiet == "steal 0.4 % of the processors' time")
        report.stealPercent = 16.9
        let noisy = report.tableText.split(separator: "\n").first { $0.hasPrefix("steal") }
        #expect(noisy?.hasPrefix("steal 16.9 % of the processors' time (the host ran other work") == true)
        #expect(noisy?.contains("compare their ratios") == true)
    }
}
