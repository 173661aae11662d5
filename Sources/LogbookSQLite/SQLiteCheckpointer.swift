import CSQLite
import Foundation
import LogbookLocks

/// Copies a WAL log's committed pages back into the database file on a thread of its own,
/// so that the connection that appends does not do it inside its commits (SQLite's automatic
/// checkpoint runs in the committing call, every 1,000 pages, and takes a noticeable share
/// of a busy worker's commit stage).
///
/// The writer's WAL hook tells it the WAL's length after each commit (`walGrew(toPages:)`).
/// Past `thresholdPages`, and again each time the WAL grew by that much more, its thread runs
/// PASSIVE checkpoints on a connection of its own: they wait for no reader or writer, copy
/// what no reader still needs and sync the database file (`synchronous=FULL`). Once they
/// left only a few frames uncopied, the writer copies those in its next commit, and the write
/// after starts the WAL over (`SQLiteCheckpointSchedule`). Nothing depends on it for
/// durability: the WAL holds every commit.
/// Its memory and time are bounded all the same: should it fall behind (or fail), the
/// writer checkpoints in its own commit once the WAL reaches `backstopPages`, as SQLite
/// would. The thread starts with the first checkpoint and ends with `stop()`.
final class SQLiteCheckpointer: Sendable {
    /// A page the commits change again and again within this span is copied once: a longer
    /// span copies less often, and the backstop bounds it.
    static let thresholdPages: Int32 = 4_000
    static let backstopPages: Int32 = 16_000
    /// At most this many frames left uncopied by the background, and the writer copies them.
    static let finishingFrames: Int32 = 256

    /// What the writer's thread and the checkpoint thread share.
    private struct Shared {
        var requested = false
        var stopping = false
        var running = false
        var ended = false
        var failures = 0
        var checkpoints = 0
        var schedule = SQLiteCheckpointSchedule(
            thresholdPages: SQLiteCheckpointer.thresholdPages, finishingFrames: SQLiteCheckpointer.finishingFrames)
    }

    private let path: String
    private let shared = ConditionLock(Shared())

    init(path: String) {
        self.path = path
    }

    /// After a commit, on the writer's thread: the WAL now holds `pages` pages. Returns
    /// whether the writer must checkpoint itself now: the few frames the background left
    /// (see `SQLiteCheckpointSchedule`), or the backstop.
    func walGrew(toPages pages: Int32) -> Bool {
        let (checkpointHere, asked, start) = shared.withLock { shared in
            let step = shared.schedule.step(walPages: pages)
            let checkpointHere = step == .finishHere || pages >= Self.backstopPages
            if pages >= Self.backstopPages { shared.schedule.checkpointedByWriter() }
            guard !shared.stopping, step == .askInBackground else { return (checkpointHere, false, false) }
            shared.requested = true
            let start = !shared.running
            shared.running = true
            return (checkpointHere, true, start)
        }
        if start {
            let thread = Thread { [self] in serve() }
            thread.name = "logbook-checkpoint"
            thread.start()
        }
        if asked { shared.broadcast() }
        return checkpointHere
    }

    /// After the writer's own checkpoint in its commit (the few frames left, or the
    /// backstop), on the writer's thread: counts it as a failure when it failed for another
    /// reason than a busy file.
    func writerCheckpointed(result: Int32) {
        guard Self.failed(result) else { return }
        shared.withLock { $0.failures += 1 }
    }

    private static func failed(_ result: Int32) -> Bool {
        result != SQLITE_OK && result & 0xFF != SQLITE_BUSY && result & 0xFF != SQLITE_LOCKED
    }

    /// Checkpoints that ran, and those that failed for another reason than a busy file (the
    /// backstop covers them), the writer's own included.
    var counts: (checkpoints: Int, failures: Int) {
        shared.withLock { ($0.checkpoints, $0.failures) }
    }

    /// Ends the thread (a checkpoint under way finishes first) and waits for it.
    func stop() {
        shared.withLock { $0.stopping = true }
        shared.broadcast()
        shared.wait(until: { !$0.running || $0.ended })
    }

    private func serve() {
        _ = logbook_sqlite_name_this_thread("logbook-checkpt")
        // A connection learns that the file is in WAL mode on its first read; until then a
        // checkpoint does nothing and says SQLITE_OK.
        let connection = try? SQLiteConnection(path: path)
        // A checkpoint syncs the WAL before it copies a frame into the file at any level but
        // OFF; the deferred-sync writer relies on that (`SQLiteDurableHorizon`): say FULL.
        let syncsWAL = (try? connection?.execute("PRAGMA synchronous = FULL")) != nil
        let isWAL = syncsWAL && (try? connection?.text("PRAGMA journal_mode"))??.lowercased() == "wal"
        defer {
            shared.withLock { $0.ended = true }
            shared.broadcast()
        }
        while waitForRequest() {
            let result = isWAL ? connection.map(catchUp) ?? SQLITE_CANTOPEN : SQLITE_CANTOPEN
            let failed = Self.failed(result)
            shared.withLock { shared in
                if result == SQLITE_OK { shared.checkpoints += 1 }
                if failed { shared.failures += 1 }
            }
        }
    }

    /// Checkpoints until every frame of the WAL is in the file, `passes` times at most: the
    /// first pass copies the pages of a thousand or more, and commits go on meanwhile; the
    /// next ones copy what those added, fewer each time. Each pass tells the schedule how far
    /// it got, so the writer can copy the rest. SQLite's result code of the last pass.
    private func catchUp(_ connection: SQLiteConnection) -> Int32 {
        var result = SQLITE_OK
        for _ in 0..<Self.passes {
            let pass = connection.checkpointPassively()
            result = pass.result
            guard result == SQLITE_OK else { break }
            shared.withLock { $0.schedule.copiedInBackground(through: pass.copiedFrames) }
            if pass.copiedFrames == pass.walFrames { break }
        }
        return result
    }

    static let passes = 4

    /// Waits for a request; false once stopping.
    private func waitForRequest() -> Bool {
        shared.withLock(
            when: { $0.requested || $0.stopping },
            do: { shared in
                shared.requested = false
                return !shared.stopping
            })
    }
}
