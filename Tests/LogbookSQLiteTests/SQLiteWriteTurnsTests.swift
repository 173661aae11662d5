import Foundation
import LogbookApplication
import LogbookSQLite
import LogbookTestSupport
import Testing

/// The SQLite writer's turns (`WriteTurns`): its write lock taken without waiting for
/// another connection, the next append run in the turn, and a turn with nothing written
/// ended without a trace.
@Suite("SQLite write turns")
struct SQLiteWriteTurnsTests {
    private func withLog(_ body: (String, SQLiteEventStore) throws -> Void) throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.sqlite3").path
        try body(path, try SQLiteEventStore(path: path))
    }

    @Test("a free lock is taken: other writers are refused until the turn's append commits and ends it")
    func turnHoldsTheLockUntilTheAppend() throws {
        try withLog { path, store in
            let other = try SQLiteEventStore(path: path, busyTimeoutMilliseconds: 0)
            #expect(try store.takeTurnIfFree())
            #expect(throws: EventStoreError.self, "another writer appended during the turn") {
                try other.append([Requests.simple("o1", stream: "b-1")])
            }
            // Reads inside the turn, several streams in one snapshot, as the handler decides.
            #expect(try store.readWholeStreams(["a-1", "b-1"]).values.allSatisfy(\.isEmpty))
            let appended = try store.append([Requests.simple("c1", stream: "a-1", count: 2)])
            #expect(appended[0].committed?.events.map(\.position) == [1, 2])
            #expect(try other.append([Requests.simple("o1", stream: "b-1")])[0].committed?.events[0].position == 3)
            store.endTurn()
            #expect(try store.read(fromPosition: 1, limit: 10, categories: nil).map(\.position) == [1, 2, 3])
        }
    }

    @Test("a lock another connection holds is not waited for: false at once, nothing held, nothing written")
    func heldLockDeclined() throws {
        try withLog { path, store in
            let lock = try SQLiteWriteLock(path: path)
            #expect(try !store.takeTurnIfFree())
            lock.release()
            // Nothing was left open: a checkpoint that needs every reader gone runs through.
            let checkpoint = RawSQLResult.firstRow(path: path, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            #expect(checkpoint.first == "0", "the declined turn left a transaction open: \(checkpoint)")
            // And the store's own busy timeout is back: an append waits for a lock held briefly.
            let brief = try SQLiteWriteLock(path: path)
            brief.release(afterMilliseconds: 200)
            #expect(try store.append([Requests.simple("c1", stream: "a-1")])[0].committed != nil)
        }
    }

    @Test("until the turn ends the connection waits for no lock, after its append too; once ended it waits again")
    func noWaitingUntilTheTurnEnds() throws {
        try withLog { path, store in
            #expect(try store.takeTurnIfFree())
            _ = try store.append([Requests.simple("c1", stream: "a-1")])
            // A second append in the same turn (a second round of deciding) meets a lock held
            // for a moment: refused at once, where the store's 5 s busy timeout would wait it out.
            let held = try SQLiteWriteLock(path: path)
            held.release(afterMilliseconds: 300)
            #expect(throws: EventStoreError.self, "the append inside the turn waited for the lock") {
                try store.append([Requests.simple("c2", stream: "a-1")])
            }
            store.endTurn()
            let again = try SQLiteWriteLock(path: path)
            again.release(afterMilliseconds: 300)
            #expect(try store.append([Requests.simple("c3", stream: "a-1")])[0].committed != nil)
            #expect(try store.read(fromPosition: 1, limit: 10, categories: nil).map(\.position) == [1, 2])
        }
    }

    @Test("a turn in which nothing was appended ends with nothing written, and releases the lock")
    func emptyTurnEnds() throws {
        try withLog { path, store in
            _ = try store.append([Requests.simple("c1", stream: "a-1")])
            #expect(try store.takeTurnIfFree())
            #expect(try store.takeTurnIfFree(), "a second take while holding the turn")
            store.endTurn()
            store.endTurn()
            let other = try SQLiteEventStore(path: path, busyTimeoutMilliseconds: 0)
            #expect(try other.append([Requests.simple("o1", stream: "b-1")])[0].committed?.events[0].position == 2)
            #expect(try store.headPosition() == 2)
        }
    }

    @Test("an append in a turn whose every request conflicts still ends the turn")
    func conflictingAppendEndsTheTurn() throws {
        try withLog { path, store in
            #expect(try store.takeTurnIfFree())
            let conflict = try store.append([
                Requests.request("c1", [Requests.event("a-1")], expecting: ["a-1": .exactly(5)])
            ])
            #expect(conflict[0].conflict != nil)
            let other = try SQLiteEventStore(path: path, busyTimeoutMilliseconds: 0)
            #expect(try other.append([Requests.simple("o1", stream: "b-1")])[0].committed != nil)
        }
    }

    @Test("a reader of the durable horizon has no turns")
    func readerRefusesTurns() throws {
        try withLog { path, _ in
            let horizon = try SQLiteDurableHorizon.opening(path: path)
            let reader = try SQLiteEventStore(path: path, durability: .readsDurable(horizon))
            #expect(throws: EventStoreError.self) { try reader.takeTurnIfFree() }
        }
    }
}
