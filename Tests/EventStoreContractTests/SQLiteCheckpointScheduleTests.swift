import Foundation
import LogbookApplication
import LogbookTestSupport
import Testing

@testable import LogbookSQLite

/// The background checkpointer is asked to run once the WAL holds 1,000 pages and then once
/// per 1,000 pages more, not after every commit: with small commits that cost a checkpoint,
/// and an fsync of the database file, every few commits.
@Suite("SQLite event store: when the background checkpoint runs")
struct SQLiteCheckpointScheduleTests {
    @Test("asked at the threshold, then once per threshold of growth, and again after the WAL starts over")
    func schedule() {
        var schedule = SQLiteCheckpointSchedule(thresholdPages: 1_000)
        let asked = [10, 999, 1_000, 1_005, 1_700, 1_999, 2_000, 2_001, 3_500, 12, 900, 1_000, 1_400, 2_400]
            .filter { schedule.shouldRequest(walPages: Int32($0)) }
        #expect(asked == [1_000, 2_000, 3_500, 1_000, 2_400])
    }

    @Test("many small commits run a checkpoint per 1,000 WAL pages or so, not one every few commits")
    func fewCheckpointsForSmallCommits() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.sqlite3").path
        let store = try SQLiteEventStore(path: path, backgroundCheckpoints: true)
        // 1,500 commits of one small event on a stream of its own: each writes a few pages
        // (the table's last leaf, the indexes' leaves, the command record), some 8,000 in all.
        let commits = 1_500
        for n in 0..<commits {
            _ = try store.append([Requests.request("c\(n)", [Requests.event("item-\(n)")])])
        }
        // Let the thread finish the checkpoint it may be running.
        var waited = 0
        while (store.backgroundCheckpointCounts?.checkpoints ?? 0) < 1 && waited < 2_000 {
            usleep(10_000)
            waited += 1
        }
        let counts = try #require(store.backgroundCheckpointCounts)
        #expect(counts.checkpoints >= 1, "no background checkpoint ran")
        #expect(counts.failures == 0)
        #expect(counts.checkpoints <= commits / 50, "\(counts.checkpoints) checkpoints for \(commits) commits")
        #expect(try store.headPosition() == Int64(commits))
    }
}
