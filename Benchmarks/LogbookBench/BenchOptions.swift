public import LogbookJSON

/// What a bench run measures and at what sizes. `standard(quick:)` gives the defaults: the
/// issue's full sizes, or small ones that finish in under a minute for a smoke test.
public struct BenchOptions: Sendable, Equatable {
    /// The parts of the bench, in the order they run.
    public enum Section: String, Sendable, CaseIterable, Comparable {
        case replay, throughput, latency, feed, memory, groups, curve, privacy, compare, scale

        public static func < (lhs: Section, rhs: Section) -> Bool {
            allCases.firstIndex(of: lhs) ?? 0 < allCases.firstIndex(of: rhs) ?? 0
        }

        /// The store whose service the section measures.
        public var store: Store { self == .scale ? .postgresql : .sqlite }
    }

    /// The event log under test (`--store`): the SQLite worker (every section but `scale`),
    /// or workers sharing a throwaway PostgreSQL (`scale`).
    public enum Store: String, Sendable, CaseIterable {
        case sqlite, postgresql
    }

    public var quick: Bool
    public var store: Store
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
    /// Log positions each consumer-group run (and the raw feed beside it) goes through.
    public var groupEvents: Int
    /// Member counts of the groups section.
    public var groupMembers: [Int]
    /// Worker counts of the scale section.
    public var workers: [Int]
    /// Feed events a second during the scale section's feed latency runs.
    public var scaleFeedEventsPerSecond: Double
    /// Round trips measured for the one-client latency figures.
    public var latencySamples: Int
    /// Where the JSON goes.
    public var outputPath: String
    /// Where the service keeps its files; nil for a fresh temporary directory.
    public var dataDirectory: String?

    /// Every section of `store`, at full or quick sizes.
    public static func standard(quick: Bool, store: Store = .sqlite) -> BenchOptions {
        BenchOptions(
            quick: quick, store: store, sections: Set(Section.allCases.filter { $0.store == store }),
            clients: [1, 8, 64], window: 16, loadThreads: 2, secondsPerRun: quick ? 1 : 5,
            logEvents: quick ? 20_000 : 1_000_000, logStreams: quick ? 2_000 : 100_000,
            feedEventsPerSecond: quick ? 1_000 : 10_000, groupEvents: quick ? 5_000 : 200_000,
            groupMembers: [1, 2, 4], workers: [1, 2, 3],
            scaleFeedEventsPerSecond: quick ? 1_000 : 5_000, latencySamples: quick ? 200 : 10_000,
            outputPath: "bench-results.json", dataDirectory: nil)
    }

    /// Reads `--store sqlite|postgresql`.
    public static func store(from word: String) throws(BenchError) -> Store {
        guard let store = Store(rawValue: word) else {
            throw BenchError(
                "--store: '\(word)' is not one of \(Store.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return store
    }

    /// Reads `--only throughput,latency`: sections of `store` only.
    public static func sections(from list: String, store: Store = .sqlite) throws(BenchError) -> Set<Section> {
        var sections = Set<Section>()
        for word in list.split(separator: ",") {
            guard let section = Section(rawValue: word.trimmingCharacters()) else {
                let known = Section.allCases.map(\.rawValue).joined(separator: ", ")
                throw BenchError("--only: '\(word)' is not one of \(known)")
            }
            guard section.store == store else {
                throw BenchError(
                    "--only: '\(section.rawValue)' measures the \(section.store.rawValue) store; "
                        + "add --store \(section.store.rawValue)")
            }
            sections.insert(section)
        }
        guard !sections.isEmpty else { throw BenchError("--only needs at least one section") }
        return sections
    }

    /// Reads `--workers 1,2,3`.
    public static func workers(from list: String) throws(BenchError) -> [Int] {
        try counts(from: list, option: "--workers", what: "workers", in: 1...16)
    }

    /// Reads `--clients 1,8,64`.
    public static func clients(from list: String) throws(BenchError) -> [Int] {
        try counts(from: list, option: "--clients", what: "clients", in: 1...1024)
    }

    private static func counts(from list: String, option: String, what: String, in range: ClosedRange<Int>)
        throws(BenchError) -> [Int]
    {
        var counts: [Int] = []
        for word in list.split(separator: ",") {
            guard let count = Int(word.trimmingCharacters()), range.contains(count) else {
                throw BenchError(
                    "\(option): '\(word)' is not a number of \(what) from \(range.lowerBound) to \(range.upperBound)")
            }
            counts.append(count)
        }
        guard !counts.isEmpty else { throw BenchError("\(option) needs at least one number") }
        return counts
    }

    /// Clients of the scale section: the largest of `clients`.
    public var scaleClients: Int { clients.max() ?? 64 }

    /// The settings as the report records them.
    public var json: JSONValue {
        [
            "quick": .bool(quick), "store": .string(store.rawValue),
            "sections": .array(sections.sorted().map { .string($0.rawValue) }),
            "clients": .array(clients.map(JSONValue.int)), "window": .int(window), "loadThreads": .int(loadThreads),
            "secondsPerRun": .double(secondsPerRun), "logEvents": .int(logEvents), "logStreams": .int(logStreams),
            "feedEventsPerSecond": .double(feedEventsPerSecond), "groupEvents": .int(groupEvents),
            "groupMembers": .array(groupMembers.map(JSONValue.int)), "workers": .array(workers.map(JSONValue.int)),
            "scaleFeedEventsPerSecond": .double(scaleFeedEventsPerSecond), "latencySamples": .int(latencySamples),
        ]
    }
}

extension Substring {
    fileprivate func trimmingCharacters() -> String {
        String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}
