import Foundation
import LogbookApplication
import LogbookTestSupport
import Testing

@testable import LogbookSQLite

/// The head and stream versions a SQLite store remembers from its own appends are used
/// only while no other connection has written the file: another store's append, a raw
/// writer, or a failed batch makes it read them from the database again, so a stale
/// memory never turns into a wrong version, a hole, or a whole batch failing.
@Suite("SQLite event store: versions known from earlier appends")
struct SQLiteKnownVersionsTests {
    private func withLog(_ body: (String) throws -> Void) throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        try body(directory.appendingPathComponent("events.sqlite3").path)
    }

    private func positionsAndVersions(_ store: SQLiteEventStore) throws -> [(Int64, String, Int)] {
        try store.read(fromPosition: 1, limit: 1_000, categories: nil).map { ($0.position, $0.stream, $0.version) }
    }

    @Test("a store whose stream another store appended to since reports a conflict, not its stale version")
    func anotherStoresAppendIsSeen() throws {
        try withLog { path in
            let first = try SQLiteEventStore(path: path)
            let second = try SQLiteEventStore(path: path)
            #expect(
                try first.append([Requests.request("a1", [Requests.event("s-1")], expecting: ["s-1": .noStream])])[0]
                    .committed?.events[0].version == 1)
            #expect(
                try second.append([Requests.request("b1", [Requests.event("s-1")], expecting: ["s-1": .at(1)])])[0]
                    .committed?.events[0].version == 2)
            // `first` last saw s-1 at version 1 and the head at 1: both are stale now.
            let stale = try first.append([
                Requests.request("a2", [Requests.event("s-1")], expecting: ["s-1": .at(1)]),
                Requests.request("a3", [Requests.event("s-1")]),
            ])
            #expect(stale[0] == .conflict(VersionConflict(stream: "s-1", expected: .at(1), actual: 2)))
            #expect(stale[1].committed?.events.map { [$0.position, Int64($0.version)] } == [[3, 3]])
            // And back the other way: `second` must see `first`'s append.
            let back = try second.append([Requests.request("b2", [Requests.event("s-1")], expecting: ["s-1": .at(2)])])
            #expect(back[0].conflict == VersionConflict(stream: "s-1", expected: .at(2), actual: 3))
            #expect(try positionsAndVersions(first).map { "\($0.0):\($0.2)" } == ["1:1", "2:2", "3:3"])
        }
    }

    @Test("a raw writer's events and command record between two appends are seen")
    func rawWriterIsSeen() throws {
        try withLog { path in
            let store = try SQLiteEventStore(path: path)
            _ = try store.append([Requests.request("a1", [Requests.event("s-1")], expecting: ["s-1": .noStream])])
            let columns =
                "(position, event_id, stream, category, version, type, data, command_id, correlation_id, causation_id, recorded_at)"
            let raw = RawSQLResult(
                path: path,
                sql:
                    "BEGIN; INSERT INTO events \(columns) VALUES (2, 'e2', 's-1', 's', 2, 'T', '{}', 'r1', 'r1', 'r1', 0); "
                    + "INSERT INTO commands VALUES ('r1', 2, 2, NULL); COMMIT;")
            #expect(raw.succeeded, "\(raw.message)")
            let results = try store.append([
                Requests.request("a2", [Requests.event("s-1")], expecting: ["s-1": .at(1)]),
                Requests.request("a3", [Requests.event("s-1")], expecting: ["s-1": .at(2)]),
            ])
            #expect(results[0].conflict == VersionConflict(stream: "s-1", expected: .at(1), actual: 2))
            #expect(results[1].committed?.events.map { [$0.position, Int64($0.version)] } == [[3, 3]])
        }
    }

    @Test("two stores taking turns on three streams, each with what it last saw, leave a log without holes")
    func takingTurns() throws {
        try withLog { path in
            let stores = [try SQLiteEventStore(path: path), try SQLiteEventStore(path: path)]
            // What each store believes, from its own results only: stale whenever the other wrote.
            var believed: [[String: Int]] = [[:], [:]]
            var truth: [String: Int] = [:]
            var committed = 0
            for turn in 0..<60 {
                let writer = (turn / 3 + turn % 2) % 2
                let stream = "s-\(turn % 3)"
                let expected = ExpectedVersion.at(believed[writer][stream, default: 0])
                let result = try stores[writer].append([
                    Requests.request("t\(turn)", [Requests.event(stream)], expecting: [stream: expected])
                ])[0]
                if let events = result.committed?.events {
                    truth[stream, default: 0] += 1
                    committed += 1
                    #expect(events[0].version == truth[stream], "turn \(turn)")
                    #expect(events[0].position == Int64(committed), "turn \(turn)")
                    believed[writer][stream] = events[0].version
                } else {
                    let conflict = try #require(result.conflict, "turn \(turn): \(result)")
                    #expect(conflict.actual == truth[stream, default: 0], "turn \(turn)")
                    believed[writer][stream] = conflict.actual
                }
            }
            #expect(committed > 20)
            let log = try positionsAndVersions(stores[0])
            #expect(log.map(\.0) == (1...Int64(committed)).map { $0 })
            for stream in ["s-0", "s-1", "s-2"] {
                #expect(log.filter { $0.1 == stream }.map(\.2) == Array(1...(truth[stream] ?? 0)))
            }
        }
    }

    @Test("a batch that fails commits nothing and leaves nothing wrong to remember")
    func failedBatchForgets() throws {
        try withLog { path in
            let store = try SQLiteEventStore(path: path)
            _ = try store.append([Requests.simple("a1", stream: "s-1")])
            // A trigger of another program's making refuses the next event: the whole batch fails.
            #expect(
                RawSQLResult(
                    path: path,
                    sql: "CREATE TRIGGER test_refuses BEFORE INSERT ON events WHEN NEW.position = 3 "
                        + "BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;"
                ).succeeded)
            #expect(throws: EventStoreError.self) {
                _ = try store.append([Requests.simple("a2", stream: "s-1"), Requests.simple("a3", stream: "s-1")])
            }
            #expect(RawSQLResult(path: path, sql: "DROP TRIGGER test_refuses").succeeded)
            let next = try store.append([Requests.request("a4", [Requests.event("s-1")], expecting: ["s-1": .at(1)])])
            #expect(next[0].committed?.events.map { [$0.position, Int64($0.version)] } == [[2, 2]])
        }
    }

    @Test("a store forgets everything when the data version it sees differs from its last commit's")
    func differentDataVersionForgets() {
        var known = SQLiteKnownVersions(capacity: 10)
        known.learn(head: 5, versions: ["a": 2, "b": 3], dataVersion: 7)
        known.trust(onlyAt: 7)
        #expect(known.head == 5 && known.version(of: "a") == 2 && known.version(of: "b") == 3)
        known.trust(onlyAt: 8)
        #expect(known.head == nil && known.version(of: "a") == nil && known.count == 0)
        known.learn(head: 6, versions: ["a": 3], dataVersion: 8)
        known.forget()
        known.trust(onlyAt: 8)
        #expect(known.head == nil && known.version(of: "a") == nil, "forgotten knowledge is not trusted again")
    }

    @Test("at most two generations of streams are kept; a stream used again stays known")
    func boundedMemory() {
        var known = SQLiteKnownVersions(capacity: 100)
        for batch in 0..<50 {
            var versions = Dictionary(uniqueKeysWithValues: (0..<20).map { ("s-\(batch)-\($0)", $0 + 1) })
            versions["hot"] = batch + 1
            known.learn(head: Int64(batch), versions: versions, dataVersion: 1)
            #expect(known.count <= 200)
        }
        #expect(known.version(of: "hot") == 50)
        #expect(known.version(of: "s-49-19") == 20)
        #expect(known.version(of: "s-0-0") == nil)
    }

    @Test("a store appending to many more streams than it remembers keeps its memory bounded")
    func storeMemoryBounded() throws {
        try withLog { path in
            let store = try SQLiteEventStore(path: path)
            for batch in 0..<3 {
                let requests = (0..<SQLiteKnownVersions.defaultCapacity).map { n in
                    Requests.request("c\(batch)-\(n)", [Requests.event("s-\(batch)-\(n)")], expecting: [:])
                }
                _ = try store.append(requests)
                #expect(store.knownStreams <= 2 * SQLiteKnownVersions.defaultCapacity)
            }
            #expect(try store.headPosition() == Int64(3 * SQLiteKnownVersions.defaultCapacity))
        }
    }
}
