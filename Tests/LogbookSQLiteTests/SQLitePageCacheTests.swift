import Foundation
import LogbookApplication
import LogbookSQLite
import LogbookTestSupport
import Testing

/// The writer's page cache (`SQLiteEventStore(pageCacheKibibytes:)`): a batch that dirties
/// more pages than SQLite's default cache holds spills pages into the WAL before its
/// commit; one that fits in the cache given writes nothing before the commit. Either way
/// the batch is appended whole.
@Suite("SQLite page cache")
struct SQLitePageCacheTests {
    /// One batch of 1,500 commands, each creating a stream of a random id with an event of
    /// 2 KB: about 4 MB of new pages in one transaction.
    private func bigBatch() -> [AppendRequest] {
        let padding = String(repeating: "x", count: 2_000)
        return (0..<1_500).map { _ in
            let stream = "item-\(UUID().uuidString)"
            return Requests.request(
                UUID().uuidString, [Requests.event(stream, data: #"{"pad":"\#(padding)"}"#)],
                expecting: [stream: .noStream])
        }
    }

    /// The cache's counters over the append of `bigBatch` by a new log's writer.
    private func appendBigBatch(pageCacheKibibytes: Int?) throws -> SQLitePageCacheCounters {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.sqlite3").path
        let store = try SQLiteEventStore(path: path, pageCacheKibibytes: pageCacheKibibytes)
        let before = store.pageCacheCounters
        let results = try store.append(bigBatch())
        #expect(results.allSatisfy { if case .committed = $0 { true } else { false } })
        #expect(try SQLiteEventStore(path: path).headPosition() == 1_500)
        return store.pageCacheCounters.since(before)
    }

    @Test("with SQLite's default cache, a batch larger than the cache spills pages before its commit")
    func defaultCacheSpills() throws {
        let counters = try appendBigBatch(pageCacheKibibytes: nil)
        #expect(counters.spills > 0, "\(counters)")
    }

    @Test("the worker's 8 MiB cache holds the batch and writes nothing before the commit")
    func largeCacheDoesNotSpill() throws {
        let counters = try appendBigBatch(pageCacheKibibytes: 8 * 1024)
        #expect(counters.spills == 0, "\(counters)")
        #expect(counters.hits > 0, "the counters are read from the writer's connection: \(counters)")
    }
}
