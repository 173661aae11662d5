import CSQLite
import Foundation

/// Copies a WAL log's committed pages back into the database file on a thread of its own,
/// so that the connection that appends does not do it inside its commits (SQLite's automatic
/// checkpoint runs in the committing call, every 1,000 pages: about a tenth of a busy
/// worker's commit stage).
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
final class SQLiteCheckpointer: @unchecked Sendable {
    /// 4,000 pages (16 MB at 4 KB): a page the commits change again and again within that span
    /// is copied once. At 1,000 the checkpoint thread took 5.0–7.3 µs of processor time a
    /// command at 64 clients, at 4,000 2.3–3.9 (BENCHMARKS.md, stop 20).
    static let thresholdPages: Int32 = 4_000
    static let backstopPages: Int32 = 16_000
    /// At most this many frames left uncopied by the background, and the writer copies them.
    static let finishingFrames: Int32 = 256

    private let path: String
    // Everything below `condition` is read and written only with `condition` locked.
    private let condition = NSCondition()
    private var requested = false
    private var stopping = false
    private var running = false
    private var ended = false
    private var failures = 0
    private var checkpoints = 0
    private var schedule = SQLiteCheckpointSchedule(
        thresholdPages: SQLiteCheckpointer.thresholdPages, finishingFrames: SQLiteCheckpointer.finishingFrames)

    init(path: String) {
        self.path = path
    }

    /// After a commit, on the writer's thread: the WAL now holds `pages` pages. Returns
    /// whether the writer must checkpoint itself now: the few frames the background left
    /// (see `SQLiteCheckpointSchedule`), or the backstop.
    func walGrew(toPages pages: Int32) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let step = schedule.step(walPages: pages)
        let checkpointHere = step == .finishHere || pages >= Self.backstopPages
        if pages >= Self.backstopPages { schedule.checkpointedByWriter() }
        guard !stopping, step == .askInBackground else { return checkpointHere }
        requested = true
        if !running {
            running = true
            let thread = Thread { [self] in serve() }
            thread.name = "logbook-checkpoint"
            thread.start()
        }
        condition.broadcast()
        return checkpointHere
    }

    /// After the writer's own checkpoint in its commit (the few frames left, or the
    /// backstop), on the writer's thread: counts it as a failure when it failed for another
    /// reason than a busy file.
    func writerCheckpointed(result: Int32) {
        guard Self.failed(result) else { return }
        condition.lock()
        failures += 1
        condition.unlock()
    }

    private static func failed(_ result: Int32) -> Bool {
        result != SQLITE_OK && result & 0xFF != SQLITE_BUSY && result & 0xFF != SQLITE_LOCKED
    }

    /// Checkpoints that ran, and those that failed for another reason than a busy file (the
    /// backstop covers them), the writer's own included.
    var counts: (checkpoints: Int, failures: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (checkpoints, failures)
    }

    /// Ends the thread (a checkpoint under way finishes first) and waits for it.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while running && !ended { condition.wait() }
        condition.unlock()
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
            condition.lock()
            ended = true
            condition.broadcast()
            condition.unlock()
        }
        while waitForRequest() {
            let result = isWAL ? connection.map(catchUp) ?? SQLITE_CANTOPEN : SQLITE_CANTOPEN
            let failed = Self.failed(result)
            condition.lock()
            if result == SQLITE_OK { checkpoints += 1 }
            if failed { failures += 1 }
            condition.unlock()
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
            condition.lock()
            schedule.copiedInBackground(through: pass.copiedFrames)
            condition.unlock()
            if pass.copiedFrames == pass.walFrames { break }
        }
        return result
    }

    static let passes = 4

    /// Waits for a request; false once stopping.
    private func waitForRequest() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !requested && !stopping { condition.wait() }
        requested = false
        return !stopping
    }
}
