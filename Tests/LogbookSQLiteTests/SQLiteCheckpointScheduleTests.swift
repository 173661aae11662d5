import Foundation
import LogbookApplication
import LogbookTestSupport
import Testing

@testable import LogbookSQLite

/// The background checkpointer is asked to run once the WAL holds `thresholdPages` (4,000)
/// and then once per that many more, not after every commit: with small commits that cost a
/// checkpoint, and an fsync of the database file, every few commits. The writer copies the
/// few frames its passes leave, so the WAL starts over near the threshold.
@Suite("SQLite event store: when the background checkpoint runs")
struct SQLiteCheckpointScheduleTests {
    @Test("asked at the threshold and once per threshold of growth; the writer finishes a nearly copied WAL")
    func schedule() {
        var schedule = SQLiteCheckpointSchedule(thresholdPages: 1_000, finishingFrames: 100)
        var steps: [(Int32, SQLiteCheckpointSchedule.Step)] = []
        func commit(_ pages: Int32) { steps.append((pages, schedule.step(walPages: pages))) }
        commit(10)
        commit(999)
        commit(1_000)  // asked
        commit(1_005)
        commit(1_700)
        schedule.copiedInBackground(through: 1_500)  // 200 frames left: too many for the writer
        commit(1_720)
        commit(2_000)  // asked again
        schedule.copiedInBackground(through: 1_950)  // 100 frames left
        commit(2_050)  // the writer copies them
        commit(2_060)  // nothing more until the WAL starts over or grows
        commit(12)  // started over
        commit(900)
        commit(1_000)  // asked
        commit(1_400)
        schedule.copiedInBackground(through: 1_390)
        commit(1_420)  // finished here
        // The writer's own checkpoint at the backstop: nothing is left to finish after it.
        commit(2_500)  // asked
        commit(15_000)  // asked
        schedule.copiedInBackground(through: 15_950)
        commit(16_000)  // 50 left: finished here (and the backstop: the caller checkpoints either way)
        schedule.checkpointedByWriter()
        commit(16_040)  // asked, not "finish here" again on the count from before the writer's checkpoint
        #expect(
            steps.filter { $0.1 != .nothing }.map { "\($0.0) \($0.1)" } == [
                "1000 askInBackground", "2000 askInBackground", "2050 finishHere", "1000 askInBackground",
                "1420 finishHere", "2500 askInBackground", "15000 askInBackground", "16000 finishHere",
                "16040 askInBackground",
            ])
    }

    @Test("many small commits run a checkpoint per threshold of WAL pages or so, not one every few commits")
    func fewCheckpointsForSmallCommits() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.sqlite3").path
        let store = try SQLiteEventStore(path: path, backgroundCheckpoints: true)
        // 3,000 commits of one small event on a stream of its own: each writes a few pages
        // (the table's last leaf, the indexes' leaves, the command record), some 16,000 in all.
        let commits = 3_000
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
        // The writer copies what the background left, so the WAL starts over instead of
        // growing towards the 16,000-page backstop (some 16,000 pages were written).
        let walBytes = (try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        #expect(walBytes < 2 * Int(SQLiteCheckpointer.thresholdPages) * 4_096, "the WAL grew to \(walBytes) bytes")
        #expect(try store.headPosition() == Int64(commits))
    }
}
