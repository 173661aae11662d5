import Foundation
import LogbookApplication
import LogbookMemory
import LogbookTestSupport
import Testing

@testable import LogbookPostgres

/// `logbook_append` decides a batch in one of two ways: by set statements when every request
/// that is not a duplicate commits, else request by request. Both must give every request
/// the outcome the in-memory store gives, and leave the same log.
@Suite(
    "PostgreSQL log: a batch decided by set statements or one request at a time",
    .enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresBatchDecisionTests {
    /// Random batches over a few streams and ids. In a clean batch every request expects the
    /// versions its worker would have seen; in a messy one, some expect wrong ones, depend on
    /// requests after or outside the batch, or repeat an id of the batch. Any request may
    /// retry an earlier id, depend on a request before it, or record an answer.
    struct RandomBatches {
        var random: SeededGenerator
        var versions: [String: Int] = [:]
        var used: [String] = []
        var counter = 0
        let streams = ["a-1", "a-2", "a-3", "b-1", "b-2", "c-1"]

        init(seed: UInt64) { random = SeededGenerator(seed: seed) }

        mutating func next() -> [AppendRequest] {
            var planned = versions
            var batch: [AppendRequest] = []
            let messy = random.chance(50)
            // The ids of the batch's requests that are not retries, which later ones may depend on.
            var fresh: [String] = []
            for _ in 0..<Int.random(in: 1...25, using: &random) {
                counter += 1
                var id = "c\(counter)"
                if !used.isEmpty, random.chance(8) { id = random.pick(used) }
                if messy, !batch.isEmpty, random.chance(3) { id = random.pick(batch).commandId }
                let retry = id != "c\(counter)"
                var expectations: [String: ExpectedVersion] = [:]
                for stream in (0..<Int.random(in: 0...2, using: &random)).map({ _ in random.pick(streams) }) {
                    let version = planned[stream] ?? 0
                    let expected = !messy || random.chance(80) ? version : version + random.pick([-1, 1, 2])
                    expectations[stream] =
                        random.chance(10) ? .any : expected <= 0 ? .noStream : .exactly(expected)
                }
                var dependencies: Set<String> = []
                if !fresh.isEmpty, random.chance(15) { dependencies.insert(random.pick(fresh)) }
                if messy, random.chance(4) { dependencies.insert(random.pick(used + ["c\(counter + 1)", "nowhere"])) }
                let request: AppendRequest
                if random.chance(25) {
                    request = Requests.answer(id, #"{"code":"refused"}"#, expecting: expectations, after: dependencies)
                } else {
                    let events = (0..<Int.random(in: 1...3, using: &random)).map { _ in
                        Requests.event(random.pick(streams))
                    }
                    if !retry { for event in events { planned[event.stream, default: 0] += 1 } }
                    request = Requests.request(id, events, expecting: expectations, after: dependencies)
                }
                if !retry { fresh.append(id) }
                batch.append(request)
            }
            return batch
        }

        /// Takes in what a batch committed: the ids now recorded, and the streams' versions.
        mutating func record(_ results: [AppendResult], of batch: [AppendRequest]) {
            for (request, result) in zip(batch, results) {
                if case .committed = result { used.append(request.commandId) }
                for event in result.committed?.events ?? [] { versions[event.stream] = event.version }
            }
        }
    }

    @Test(
        "random batches get the in-memory store's outcomes and log, decided together or one by one",
        arguments: [7, 2026] as [UInt64])
    func bothDecisionsMatchTheReference(seed: UInt64) throws {
        let together = try PostgresTestDatabase()
        let oneByOne = try PostgresTestDatabase()
        _ = try PostgresEventStore(connectionString: oneByOne.connectionString)
        try RawPostgres(oneByOne.connectionString).run(
            "ALTER DATABASE \(oneByOne.name) SET logbook.decide_one_by_one = 'on'")
        let stores = [
            try PostgresEventStore(connectionString: together.connectionString),
            try PostgresEventStore(connectionString: oneByOne.connectionString),
        ]
        let reference = InMemoryEventStore()
        var batches = RandomBatches(seed: seed)
        var refusals = 0
        var batchesWithoutRefusals = 0
        for _ in 0..<80 {
            let batch = batches.next()
            let expected = try reference.append(batch)
            for store in stores { #expect(try store.append(batch) == expected, "seed \(seed)") }
            let refused = expected.count { $0.conflict != nil || $0.abandonedFor != nil }
            refusals += refused
            if refused == 0 { batchesWithoutRefusals += 1 }
            batches.record(expected, of: batch)
        }
        // Both ways of deciding were taken: batches with refusals, and batches without.
        #expect(refusals > 20 && batchesWithoutRefusals > 10, "\(refusals) refusals, \(batchesWithoutRefusals) clean")
        let log = try reference.read(fromPosition: 1, limit: 100_000, categories: nil)
        #expect(log.count > 500)
        for store in stores { #expect(try store.read(fromPosition: 1, limit: 100_000, categories: nil) == log) }
        #expect(try Self.decision(of: [Requests.simple("last", stream: "a-1")], in: oneByOne) == "one by one")
    }

    /// Which way `logbook_append` decided `batch`, read from the setting it leaves in its
    /// transaction.
    private static func decision(of batch: [AppendRequest], in database: PostgresTestDatabase) throws -> String {
        try append(batch, in: database, thenRead: "SELECT current_setting('logbook.decided', true)").read
            .first?.first ?? ""
    }

    /// Calls `logbook_append` with `batch` in a transaction of its own, and runs `query` in
    /// that transaction before it commits: each request's outcome, in order, and the query's rows.
    private static func append(_ batch: [AppendRequest], in database: PostgresTestDatabase, thenRead query: String)
        throws -> (outcomes: [String], read: [[String]])
    {
        let raw = try RawPostgres(database.connectionString)
        let json = PostgresParameters.batch(batch, evolution: .standard).replacingOccurrences(of: "'", with: "''")
        try raw.run("BEGIN")
        let outcomes = try raw.run("SELECT outcome FROM logbook_append('\(json)'::jsonb) ORDER BY ordinal")
        let read = try raw.run(query)
        try raw.run("COMMIT")
        return (outcomes.map { $0.first ?? "" }, read)
    }

    @Test("a batch in which every request commits is decided together; a conflict sends it one by one")
    func theUsualBatchIsDecidedTogether() throws {
        let database = try PostgresTestDatabase()
        let store = try PostgresEventStore(connectionString: database.connectionString)
        _ = try store.append([Requests.simple("c0", stream: "a-1")])
        let usual = [
            Requests.request("c1", [Requests.event("a-1")], expecting: ["a-1": .exactly(1)]),
            Requests.request("c2", [Requests.event("a-1"), Requests.event("b-1")], expecting: ["a-1": .exactly(2)]),
            Requests.answer("c3", expecting: ["b-1": .exactly(1)], after: ["c2"]),
            Requests.request("c0", [Requests.event("a-1")]),
        ]
        #expect(try Self.decision(of: usual, in: database) == "together")
        let conflicting = [
            Requests.request("c4", [Requests.event("a-1")], expecting: ["a-1": .exactly(3)]),
            Requests.request("c5", [Requests.event("a-1")], expecting: ["a-1": .exactly(9)]),
        ]
        #expect(try Self.decision(of: conflicting, in: database) == "one by one")
        let abandoned = [Requests.request("c6", [Requests.event("c-1")], after: ["c7"])]
        #expect(try Self.decision(of: abandoned, in: database) == "one by one")
        #expect(try store.read(fromPosition: 1, limit: 100, categories: nil).map(\.version) == [1, 2, 3, 1, 4])
    }

    /// A batch of hundreds of ids and streams against tables of thousands of rows, with no
    /// statistics yet (a new database): the planner's cost model would scan `commands` and
    /// `streams` whole for an `= ANY` or a join over the batch. The function and its checks
    /// must reach every row they read or write by its key instead: no sequential scan of the
    /// tables that grow with the log, counted by the server for the transaction. (The claims
    /// table holds only appends in flight and dead rows until vacuum: the planner may scan
    /// it when that is cheaper than fetching the claims by their row addresses.)
    @Test("an append reaches rows by their keys, never by scanning a table")
    func keyLookupsNeverScanTables() throws {
        let database = try PostgresTestDatabase()
        let store = try PostgresEventStore(connectionString: database.connectionString)
        for round in 0..<10 {
            let batch = (0..<500).map { Requests.simple("c\(round * 500 + $0)", stream: "s-\(round * 500 + $0)") }
            #expect(try store.append(batch).allSatisfy { if case .committed = $0 { true } else { false } })
        }
        let existing = (0..<300).map { index in
            Requests.request(
                "e\(index)", [Requests.event("s-\(index * 7)")], expecting: ["s-\(index * 7)": .exactly(1)])
        }
        let new = (0..<300).map { Requests.simple("n\($0)", stream: "t-\($0)") }
        let retried = (0..<20).map { Requests.simple("c\($0 * 11)", stream: "s-\($0 * 11)") }
        let (outcomes, scanned) = try Self.append(
            existing + new + retried, in: database,
            thenRead: "SELECT relname || ' ' || seq_scan FROM pg_stat_xact_user_tables "
                + "WHERE seq_scan > 0 AND relname IN ('events', 'commands', 'streams') ORDER BY relname")
        #expect(
            outcomes == Array(repeating: "committed", count: 600) + Array(repeating: "duplicate", count: 20))
        #expect(scanned.isEmpty, "tables scanned: \(scanned.map { $0.first ?? "" })")
        #expect(try store.headPosition() == 5_600)
    }

    /// An append that only records answers reads the head while others append events: its
    /// record must point at the head as the commands' check reads it at the end.
    @Test("answers recorded while other stores append events are never refused")
    func answersBesideAppends() throws {
        let database = try PostgresTestDatabase()
        _ = try PostgresEventStore(connectionString: database.connectionString)
        let errors = onThreads(4) { thread in
            let store = try PostgresEventStore(connectionString: database.connectionString)
            for round in 0..<150 {
                let id = "t\(thread)-\(round)"
                let request =
                    thread.isMultiple(of: 2)
                    ? Requests.answer(id) : Requests.simple(id, stream: "s-\(thread)-\(round % 7)")
                let result = try store.append([request])
                guard case .committed = result.first else {
                    throw PostgresTestError("\(id): \(String(describing: result.first))")
                }
            }
        }
        #expect(errors.isEmpty, "\(errors.prefix(3))")
    }
}
