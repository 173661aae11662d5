public import LogbookJSON

/// What a bench run measures and at what sizes. `standard(quick:)` gives the defaults: the
/// issue's full sizes, or small ones that finish in under a minute for a smoke test.
public struct BenchOptions: Sendable, Equatable {
    /// The parts of the bench, in the order they run.
    public enum Section: String, Sendable, CaseIterable, Comparable {
        case replay, throughput, latency, feed, memory, compare

        public static func < (lhs: Section, rhs: Section) -> Bool {
            allCases.firstIndex(of: lhs) ?? 0 < allCases.firstIndex(of: rhs) ?? 0
        }
    }

    public var quick: Bool
    public var sections: Set<Section>
    /// Concurrent pipelined clients of each throughput run.
    public var clients: [Int]
    /// Commands each client keeps in flight.
    public var window: Int
    /// Threads the load clients run on.
    public var loadThreads: Int
    /// How long each throughput run (and each baseline beside it) lasts.
    public var secondsPerRun: Double
    /// The generated log for the replay and memory figures.
    public var logEvents: Int
    public var logStreams: Int
    /// Feed events a second during the feed latency run.
    public var feedEventsPerSecond: Double
    /// Round trips measured for the one-client latency figures.
    public var latencySamples: Int
    /// Where the JSON goes.
    public var outputPath: String
    /// Where the service keeps its files; nil for a fresh temporary directory.
    public var dataDirectory: String?

    public static func standard(quick: Bool) -> BenchOptions {
        BenchOptions(
            quick: quick, sections: Set(Section.allCases), clients: [1, 8, 64], window: 16, loadThreads: 2,
            secondsPerRun: quick ? 1 : 5, logEvents: quick ? 20_000 : 1_000_000,
            logStreams: quick ? 2_000 : 100_000, feedEventsPerSecond: quick ? 1_000 : 10_000,
            latencySamples: quick ? 200 : 10_000, outputPath: "bench-results.json", dataDirectory: nil)
    }

    /// Reads `--only throughput,latency`.
    public static func sections(from list: String) throws(BenchError) -> Set<Section> {
        var sections = Set<Section>()
        for word in list.split(separator: ",") {
            guard let section = Section(rawValue: word.trimmingCharacters()) else {
                let known = Section.allCases.map(\.rawValue).joined(separator: ", ")
                throw BenchError("--only: '\(word)' is not one of \(known)")
            }
            sections.insert(section)
        }
        guard !sections.isEmpty else { throw BenchError("--only needs at least one section") }
        return sections
    }

    /// Reads `--clients 1,8,64`.
    public static func clients(from list: String) throws(BenchError) -> [Int] {
        var counts: [Int] = []
        for word in list.split(separator: ",") {
            guard let count = Int(word.trimmingCharacters()), (1...1024).contains(count) else {
                throw BenchError("--clients: '\(word)' is not a number of clients from 1 to 1024")
            }
            counts.append(count)
        }
        guard !counts.isEmpty else { throw BenchError("--clients needs at least one number") }
        return counts
    }

    /// The settings as the report records them.
    public var json: JSONValue {
        [
            "quick": .bool(quick), "sections": .array(sections.sorted().map { .string($0.rawValue) }),
            "clients": .array(clients.map(JSONValue.int)), "window": .int(window), "loadThreads": .int(loadThreads),
            "secondsPerRun": .double(secondsPerRun), "logEvents": .int(logEvents), "logStreams": .int(logStreams),
            "feedEventsPerSecond": .double(feedEventsPerSecond), "latencySamples": .int(latencySamples),
        ]
    }
}

extension Substring {
    fileprivate func trimmingCharacters() -> String {
        String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}
