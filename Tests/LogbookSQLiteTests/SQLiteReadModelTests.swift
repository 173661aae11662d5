import Foundation
import LogbookApplication
import LogbookDomain
import LogbookTestSupport
import Synchronization
import Testing

@testable import LogbookSQLite

/// What only the SQLite read-model store promises: a file of its own that survives
/// reopening, that refuses files it did not make, and a separate reader.
@Suite("SQLite read-model store")
struct SQLiteReadModelTests {
    private static func sampleLog() throws -> Log {
        var log = Log()
        log.record(try Events.registered("u1", birthday: "1999-09-09"))
        log.record(try Events.productAdded("p1", name: "Green Tea", stock: 2))
        log.record(try Events.postCreated("x1", author: "u1", content: "with \u{0} a nul"))
        log.record(try Events.purchase(order: "o1", user: "u1", product: "p1", quantity: 2, stockAfter: 0))
        return log
    }

    @Test func reopeningKeepsRowsAndCheckpoint() throws {
        let harness = try ReadModelHarness(.sqlite)
        let log = try Self.sampleLog()
        try harness.store.apply(log.all, through: log.head + 3)
        let before = try harness.snapshot()
        let orders = try harness.reader.orders(userId: UserId("u1"), page: 1, perPage: 10)
        try harness.reopen()
        #expect(try harness.snapshot() == before)
        #expect(try harness.store.checkpoint() == log.head + 3)
        #expect(try harness.reader.orders(userId: UserId("u1"), page: 1, perPage: 10) == orders)
        #expect(try harness.reader.post(PostId("x1"))?.content == "with \u{0} a nul")
        #expect(try !harness.store.isComplete)
        // And it carries on from there.
        var more = log
        more.skipPositions(3)
        more.record(try Events.registered("u2"))
        try harness.catchUp(more)
        #expect(try harness.reader.counts().users == 2)
    }

    @Test func theFileIsMarkedAndUsesWAL() throws {
        let harness = try ReadModelHarness(.sqlite)
        let path = try #require(harness.path)
        let store = try #require(harness.store as? SQLiteReadModelStore)
        let settings = try store.durabilitySettings()
        #expect(settings.journalMode == "wal")
        #expect(settings.synchronous == 1)
        let row = RawSQLResult.firstRow(path: path, sql: "SELECT * FROM pragma_application_id, pragma_user_version")
        #expect(row == [String(0x4C4F_4752), "1"])
        #expect(RawSQLResult.firstRow(path: path, sql: "PRAGMA journal_mode") == ["wal"])
    }

    /// A bulk load writes without a journal or syncs, with a marker beside the file, and
    /// leaves the file on the WAL, whole and marked as nothing special, when it ends.
    @Test func aBulkLoadWritesWithoutAJournalAndEndsOnTheWAL() throws {
        let harness = try ReadModelHarness(.sqlite, bulkFlushRows: 2)
        let path = try #require(harness.path)
        let store = try #require(harness.store as? SQLiteReadModelStore)
        let log = try Self.sampleLog()
        try store.beginBulkLoad()
        #expect(try store.durabilitySettings() == ("off", 0))
        #expect(FileManager.default.fileExists(atPath: path + "-bulkload"))
        try store.apply(log.all, through: log.head)
        try store.endBulkLoad()
        #expect(try store.durabilitySettings() == ("wal", 1))
        #expect(!FileManager.default.fileExists(atPath: path + "-bulkload"))
        #expect(RawSQLResult.firstRow(path: path, sql: "PRAGMA journal_mode") == ["wal"])
        #expect(RawSQLResult.firstRow(path: path, sql: "PRAGMA integrity_check") == ["ok"])
        try harness.reopen()
        #expect(try harness.reader.counts() == ReadModelCounts(users: 1, posts: 1, products: 1, orders: 1))
        #expect(try harness.store.checkpoint() == log.head)
    }

    /// The journal can only be turned off while no other connection has the file open;
    /// with one open, the bulk load goes on in the WAL, to the same rows.
    @Test func aBulkLoadOfAFileOpenElsewhereStaysOnTheWAL() throws {
        let harness = try ReadModelHarness(.sqlite, bulkFlushRows: 2)
        let path = try #require(harness.path)
        let store = try #require(harness.store as? SQLiteReadModelStore)
        let other = try SQLiteReadModelReader(path: path)
        #expect(try other.checkpoint() == 0)
        let log = try Self.sampleLog()
        try store.beginBulkLoad()
        #expect(try store.durabilitySettings() == ("wal", 1))
        #expect(!FileManager.default.fileExists(atPath: path + "-bulkload"))
        try store.apply(log.all, through: log.head)
        try store.endBulkLoad()
        #expect(try store.durabilitySettings() == ("wal", 1))
        #expect(try other.counts() == ReadModelCounts(users: 1, posts: 1, products: 1, orders: 1))
        #expect(try other.checkpoint() == log.head)
    }

    /// A bulk load writes what it holds once its texts reach `bulkFlushTextBytes`, however
    /// few the rows: a few posts of long content must not wait for 50,000 rows.
    @Test(arguments: [(10_000, true), (16 << 20, false)])
    func aBulkLoadWritesOnceItHoldsEnoughText(budget: Int, writesBeforeTheEnd: Bool) throws {
        let harness = try ReadModelHarness(.sqlite, bulkFlushRows: 1_000_000, bulkFlushTextBytes: budget)
        let path = try #require(harness.path)
        let store = try #require(harness.store as? SQLiteReadModelStore)
        var log = Log()
        let body = String(repeating: "a long post body ", count: 180)  // 3,060 bytes
        let count = {
            RawSQLResult.firstRow(
                path: path, sql: "SELECT (SELECT COUNT(*) FROM posts), checkpoint FROM read_model_meta")
        }
        try store.beginBulkLoad()
        for index in 1...5 {
            let event = log.record(try Events.postCreated("x\(index)", author: "u1", content: body))
            try store.apply([event], through: log.head)
            switch index {
            // Three posts hold ~9.2 KB of text: under either budget, nothing written yet.
            case 3: #expect(count() == ["0", "0"])
            // The fourth takes the buffer over the small budget: its rows are written, with
            // their checkpoint; the fifth waits in the buffer for the end.
            case 5: #expect(count() == (writesBeforeTheEnd ? ["4", "4"] : ["0", "0"]))
            default: break
            }
        }
        try store.endBulkLoad()
        #expect(try harness.reader.counts().posts == 5)
        #expect(try harness.store.checkpoint() == log.head)
    }

    /// A live store copies its WAL back every 1,000 pages, so its checkpoints stay short
    /// bursts on the disk the worker syncs on; a catch-up's batches may let it reach 10,000.
    @Test func aLiveStoreCheckpointsEveryThousandPages() throws {
        #expect(SQLiteReadModelCheckpoints.pages(forBatchOf: 1) == 1_000)
        #expect(SQLiteReadModelCheckpoints.pages(forBatchOf: 4_999) == 1_000)
        #expect(SQLiteReadModelCheckpoints.pages(forBatchOf: 5_000) == 10_000)
        let harness = try ReadModelHarness(.sqlite)
        let path = try #require(harness.path)
        var log = Log()
        let body = String(repeating: "a long post body ", count: 180)  // ~3 KB: about a page a post
        // ~2,500 live batches of one post: several times 1,000 pages through the WAL.
        for index in 1...2_500 {
            let event = log.record(try Events.postCreated("x\(index)", author: "u1", content: body))
            try harness.store.apply([event], through: log.head)
        }
        #expect(try harness.reader.counts().posts == 2_500)
        let walBytes = try #require(try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int)
        // 1,000 pages and the last transaction's few, each frame a page and its 24-byte header.
        #expect(walBytes > 900 * 4_120 && walBytes < 1_100 * 4_120, "the WAL holds \(walBytes / 4_120) frames")
    }

    @Test func anEventLogIsRefusedAndLeftAlone() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.sqlite3").path
        _ = try SQLiteEventStore(path: path)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        for open in [Opener.store, .reader] {
            let error = try #require(throws: ReadModelStoreError.self) { try open.run(path) }
            guard case .notAReadModel(let errorPath, let reason) = error else {
                Issue.record("expected notAReadModel, got \(error)")
                continue
            }
            #expect(errorPath == path)
            #expect(reason.contains("event log"))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(try SQLiteEventStore(path: path).headPosition() == 0)
    }

    @Test func garbageIsRefusedAndLeftAlone() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("garbage").path
        let garbage = Data((0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try garbage.write(to: URL(fileURLWithPath: path))
        for open in [Opener.store, .reader] {
            let error = try #require(throws: ReadModelStoreError.self) { try open.run(path) }
            #expect(error == .notAReadModel(path: path, reason: "it is not a SQLite database"))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage)
    }

    @Test func anotherProgramsDatabaseAndANewerSchemaAreRefused() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let foreign = directory.appendingPathComponent("foreign.sqlite3").path
        #expect(RawSQLResult(path: foreign, sql: "CREATE TABLE notes (text TEXT)").succeeded)
        for open in [Opener.store, .reader] {
            #expect(
                throws: ReadModelStoreError.notAReadModel(
                    path: foreign, reason: "it is another program's SQLite database (application_id 0)")
            ) { try open.run(foreign) }
        }
        #expect(RawSQLResult.firstRow(path: foreign, sql: "SELECT count(*) FROM sqlite_schema") == ["1"])

        let newer = directory.appendingPathComponent("newer.sqlite3").path
        _ = try SQLiteReadModelStore(path: newer)
        #expect(RawSQLResult(path: newer, sql: "PRAGMA user_version = 2").succeeded)
        for open in [Opener.store, .reader] {
            #expect(throws: ReadModelStoreError.unsupportedSchema(found: 2, supported: 1)) { try open.run(newer) }
        }
    }

    @Test func theReaderNeedsAStoreThatExists() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = directory.appendingPathComponent("missing.sqlite3").path
        #expect(throws: ReadModelStoreError.self) { try SQLiteReadModelReader(path: missing) }
        #expect(!FileManager.default.fileExists(atPath: missing))

        let empty = directory.appendingPathComponent("empty.sqlite3").path
        #expect(FileManager.default.createFile(atPath: empty, contents: nil))
        let error = try #require(throws: ReadModelStoreError.self) { try SQLiteReadModelReader(path: empty) }
        guard case .notAReadModel = error else {
            Issue.record("expected notAReadModel, got \(error)")
            return
        }
        // The store then makes it one, and the reader opens it.
        _ = try SQLiteReadModelStore(path: empty)
        #expect(try SQLiteReadModelReader(path: empty).checkpoint() == 0)
    }

    @Test func theReaderLeavesNoTransactionOpen() throws {
        let harness = try ReadModelHarness(.sqlite)
        let path = try #require(harness.path)
        var log = Log()
        for index in 0..<50 { log.record(try Events.productAdded("p\(index)", name: "Tea \(index)")) }
        try harness.catchUp(log)
        // Stop reading part-way through lists, lookups and counts.
        _ = try harness.reader.products(search: "tea", page: 1, perPage: 3)
        _ = try harness.reader.product(ProductId("p1"))
        _ = try harness.reader.counts()
        _ = try harness.reader.checkpoint()
        // A full WAL checkpoint needs every reader to have finished: (busy, log, checkpointed).
        let row = RawSQLResult.firstRow(path: path, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        #expect(row.first == "0")
    }

    @Test func theReaderReadsWhileTheStoreWritesOnAnotherThread() throws {
        let harness = try ReadModelHarness(.sqlite)
        var log = Log()
        for index in 0..<2_000 { log.record(try Events.registered("u\(index)")) }
        let store = harness.store
        let events = log.all
        let outcome = Mutex<(done: Bool, error: ReadModelStoreError?)>((false, nil))
        Thread {
            var next = 0
            do throws(ReadModelStoreError) {
                while next < events.count {
                    let batch = Array(events[next..<min(next + 100, events.count)])
                    try store.apply(batch, through: batch.last!.position)
                    next += 100
                }
                outcome.withLock { $0.done = true }
            } catch {
                outcome.withLock { $0 = (true, error) }
            }
        }.start()
        var last: Int64 = 0
        var reads = 0
        while !outcome.withLock({ $0.done }) || last < 2_000 {
            // The checkpoint is read first, so the rows seen are at least as new.
            let checkpoint = try harness.reader.checkpoint()
            #expect(checkpoint >= last)
            let total = try harness.reader.users(page: 1, perPage: 1).total
            #expect(Int64(total) >= checkpoint)
            last = checkpoint
            reads += 1
            if outcome.withLock({ $0.error }) != nil { break }
        }
        #expect(outcome.withLock { $0.error } == nil)
        #expect(try harness.reader.counts().users == 2_000)
        #expect(reads > 1)
    }
}

/// The two ways to open a file.
enum Opener {
    case store, reader

    func run(_ path: String) throws(ReadModelStoreError) {
        switch self {
        case .store: _ = try SQLiteReadModelStore(path: path)
        case .reader: _ = try SQLiteReadModelReader(path: path)
        }
    }
}
