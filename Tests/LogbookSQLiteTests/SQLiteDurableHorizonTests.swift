import Foundation
import LogbookApplication
import LogbookSQLite
import LogbookTestSupport
import Testing

/// The worker's SQLite connections around one `SQLiteDurableHorizon`: the writer commits
/// with `synchronous=NORMAL` and its own reads see every commit; a `.readsDurable` reader
/// sees nothing past the durable head (its head, pages, streams and command records) until
/// a flush covers it.
@Suite("SQLite durable horizon: deferred syncs, and readers that stop at the durable head")
struct SQLiteDurableHorizonTests {
    private static func withLog(_ body: (String) throws -> Void) throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        try body(directory.appendingPathComponent("events.sqlite3").path)
    }

    @Test("the writer commits without a sync; a durable reader sees the commit only once a flush covered it")
    func readersWaitForTheFlush() throws {
        try Self.withLog { path in
            let horizon = SQLiteDurableHorizon(durableHead: 0)
            let writer = try SQLiteEventStore(path: path, durability: .deferredSyncs(horizon))
            let reader = try SQLiteEventStore(path: path, durability: .readsDurable(horizon))
            #expect(try writer.durabilitySettings().synchronous == 1, "1 is NORMAL")
            #expect(try reader.durabilitySettings().synchronous == 2, "a reader keeps FULL")

            _ = try writer.append([Requests.simple("c1", stream: "a-1", count: 2)])
            try horizon.flush()
            _ = try writer.append([Requests.simple("c2", stream: "a-1"), Requests.simple("c3", stream: "b-1")])
            #expect(horizon.committedHead == 4)
            #expect(horizon.durableHead == 2)

            // The writer decides on what it committed; the reader sees only what is durable.
            #expect(try writer.headPosition() == 4)
            #expect(try writer.readStream("a-1", fromVersion: 1, limit: 10).count == 3)
            #expect(try reader.headPosition() == 2)
            #expect(try reader.read(fromPosition: 1, limit: 10, categories: nil).map(\.position) == [1, 2])
            #expect(try reader.read(fromPosition: 1, limit: 10, categories: ["b"]).isEmpty)
            #expect(try reader.visitedEvents(fromPosition: 1, limit: 10, categories: nil).map(\.position) == [1, 2])
            #expect(try reader.readStream("a-1", fromVersion: 1, limit: 10).map(\.version) == [1, 2])
            #expect(try reader.readWholeStreams(["a-1", "b-1"]).mapValues { $0.count } == ["a-1": 2, "b-1": 0])
            #expect(try reader.commandRecord("c1") != nil)
            #expect(try reader.commandRecord("c3") == nil, "a command record past the durable head")

            try horizon.flush()
            #expect(horizon.durableHead == 4)
            #expect(try reader.headPosition() == 4)
            #expect(try reader.read(fromPosition: 1, limit: 10, categories: nil).map(\.position) == [1, 2, 3, 4])
            #expect(try reader.commandRecord("c3")?.position == 4)
        }
    }

    @Test("the writer's opening syncs the WAL and takes the log's head as durable, whatever the horizon began at")
    func openingSetsTheHead() throws {
        try Self.withLog { path in
            _ = try SQLiteEventStore(path: path).append([Requests.simple("c1", stream: "a-1", count: 3)])
            let horizon = SQLiteDurableHorizon(durableHead: 0)
            let writer = try SQLiteEventStore(path: path, durability: .deferredSyncs(horizon))
            #expect(horizon.durableHead == 3 && horizon.committedHead == 3)
            let reader = try SQLiteEventStore(path: path, durability: .readsDurable(horizon))
            #expect(try reader.headPosition() == 3)
            _ = writer
        }
    }

    @Test("once the writer is closed a flush fails: there is no WAL of its to sync")
    func flushWithoutWriter() throws {
        try Self.withLog { path in
            let horizon = SQLiteDurableHorizon(durableHead: 0)
            var writer: SQLiteEventStore? = try SQLiteEventStore(path: path, durability: .deferredSyncs(horizon))
            _ = try writer?.append([Requests.simple("c1", stream: "a-1")])
            writer = nil
            #expect(throws: EventStoreError.self) { try horizon.flush() }
            #expect(horizon.durableHead == 0)
        }
    }

    @Test("what another connection wrote past the horizon's writer is served once a reader's head synced it")
    func foreignWrites() throws {
        try Self.withLog { path in
            let horizon = try SQLiteDurableHorizon.opening(path: path)
            let writer = try SQLiteEventStore(path: path, durability: .deferredSyncs(horizon))
            let reader = try SQLiteEventStore(path: path, durability: .readsDurable(horizon))
            _ = try writer.append([Requests.simple("c1", stream: "a-1")])
            try horizon.flush()
            // A second writer (FULL, as any other store), behind the horizon's writer's back.
            _ = try SQLiteEventStore(path: path).append([Requests.simple("c2", stream: "b-1", count: 2)])
            #expect(horizon.durableHead == 1)
            #expect(try reader.headPosition() == 3)
            #expect(horizon.durableHead == 3 && horizon.committedHead == 3)
            #expect(try reader.read(fromPosition: 1, limit: 10, categories: nil).map(\.position) == [1, 2, 3])
            // The writer goes on after them.
            _ = try writer.append([Requests.simple("c3", stream: "a-1")])
            try horizon.flush()
            #expect(try reader.headPosition() == 4)
        }
    }

    @Test("a reader refuses appends: the horizon's writer is the one writer")
    func readerRefusesAppends() throws {
        try Self.withLog { path in
            let horizon = try SQLiteDurableHorizon.opening(path: path)
            let reader = try SQLiteEventStore(path: path, durability: .readsDurable(horizon))
            #expect(throws: EventStoreError.self) { _ = try reader.append([Requests.simple("c1", stream: "a-1")]) }
            #expect(try SQLiteEventStore(path: path).headPosition() == 0)
        }
    }

    @Test("opening a horizon reads the log's head (creating an empty log) and refuses a file that is not a log")
    func openingAHorizon() throws {
        try Self.withLog { path in
            #expect(try SQLiteDurableHorizon.opening(path: path).durableHead == 0)
            _ = try SQLiteEventStore(path: path).append([Requests.simple("c1", stream: "a-1", count: 4)])
            let horizon = try SQLiteDurableHorizon.opening(path: path)
            #expect(horizon.durableHead == 4 && horizon.committedHead == 4)
        }
        try Self.withLog { path in
            try Data("not a database, not at all".utf8).write(to: URL(fileURLWithPath: path))
            #expect(throws: EventStoreError.self) { _ = try SQLiteDurableHorizon.opening(path: path) }
        }
    }

    @Test("an older writer closed after a newer one opened leaves the newer one's WAL descriptor alone")
    func olderWriterDetaches() throws {
        try Self.withLog { path in
            let horizon = try SQLiteDurableHorizon.opening(path: path)
            var older: SQLiteEventStore? = try SQLiteEventStore(path: path, durability: .deferredSyncs(horizon))
            let newer = try SQLiteEventStore(path: path, durability: .deferredSyncs(horizon))
            older = nil
            _ = try newer.append([Requests.simple("c1", stream: "a-1")])
            try horizon.flush()
            #expect(horizon.durableHead == 1)
            #expect(older == nil)
        }
    }

    @Test("a file that is not a log is refused by a deferred writer as by any store, and no WAL is attached")
    func foreignFile() throws {
        try Self.withLog { path in
            try Data("not a database, not at all".utf8).write(to: URL(fileURLWithPath: path))
            let horizon = SQLiteDurableHorizon(durableHead: 0)
            #expect(throws: EventStoreError.self) {
                _ = try SQLiteEventStore(path: path, durability: .deferredSyncs(horizon))
            }
            #expect(throws: EventStoreError.self) { try horizon.flush() }
        }
    }
}
