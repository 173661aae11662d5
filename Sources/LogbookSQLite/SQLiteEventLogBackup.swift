import CSQLite
import Foundation
import Glibc

/// A consistent copy of a SQLite event log, taken while a worker goes on writing it.
///
/// SQLite's online backup API copies the log page by page in one step, that is in one read
/// transaction: the copy is the log as of one commit, with every command acknowledged before
/// the copy began, and the worker (WAL journal) keeps committing meanwhile. Chosen over
/// `VACUUM INTO`, which re-inserts every row and rebuilds every index, and which does not
/// sync its output (SQLite's documentation says so); the backup API writes through an
/// ordinary connection, and this copy is synced before it is put in place.
///
/// The copy is written under `DEST.partial`, checked (`PRAGMA integrity_check`), the source's
/// WAL synced (so the copy holds nothing the log could still lose), the copy synced, and
/// only then linked to its name, which must not exist (`link(2)` refuses, so a backup never
/// overwrites anything); a failed copy leaves nothing behind. The source is opened read-only.
public enum SQLiteEventLogBackup {
    /// What was copied: the copy's head (its last position), its events, its size.
    public struct Summary: Sendable, Equatable {
        public let head: Int64
        public let events: Int64
        public let bytes: Int64
    }

    /// How long a source that cannot be read for now (a busy lock) is waited for.
    static let busyMilliseconds = 5_000

    /// Copies the log at `source` to a new file at `destination`.
    public static func copy(from source: String, to destination: String) throws(SQLiteEventLogBackupError)
        -> Summary
    {
        guard !FileManager.default.fileExists(atPath: destination) else { throw .destinationExists(destination) }
        let partial = destination + ".partial"
        guard !FileManager.default.fileExists(atPath: partial) else { throw .partialExists(partial) }
        do throws(SQLiteEventLogBackupError) {
            let summary = try writeChecked(from: source, to: partial)
            try sync(partial)
            guard link(partial, destination) == 0 else {
                let error = errno
                throw error == EEXIST
                    ? SQLiteEventLogBackupError.destinationExists(destination)
                    : .io("cannot link \(partial) to \(destination): \(String(cString: strerror(error)))")
            }
            unlink(partial)
            if let failure = FileSync.syncDirectory(containing: destination) { throw .io(failure) }
            return summary
        } catch {
            for leftover in [partial, partial + "-journal", partial + "-wal", partial + "-shm"] { unlink(leftover) }
            throw error
        }
    }

    /// Copies `source` into the new file `partial` and checks the copy; the connections are
    /// closed when this returns.
    private static func writeChecked(from source: String, to partial: String) throws(SQLiteEventLogBackupError)
        -> Summary
    {
        let from: SQLiteConnection
        do {
            from = try SQLiteConnection(path: source, readOnly: true)
            try from.execute("PRAGMA busy_timeout = \(busyMilliseconds)")
        } catch {
            throw .sourceUnavailable("cannot open \(source): \(error)")
        }
        do {
            let applicationId = try from.scalar("PRAGMA application_id") ?? 0
            guard applicationId == SQLiteSchema.applicationId else {
                throw SQLiteEventLogBackupError.notAnEventLog(
                    source, "it is another program's SQLite database (application_id \(applicationId))")
            }
        } catch let error as SQLiteEventLogBackupError {
            throw error
        } catch let error as SQLiteError where error.isCorruption {
            throw .notAnEventLog(source, "\(error)")
        } catch {
            throw .sourceUnavailable("\(source): \(error)")
        }
        let to: SQLiteConnection
        do {
            to = try SQLiteConnection(path: partial)
            try to.copy(from: from, busyMilliseconds: busyMilliseconds)
        } catch {
            throw .io("copying \(source) to \(partial): \(error)")
        }
        if let wal = from.walPath { try syncWAL(wal) }
        do {
            let check = try to.text("PRAGMA integrity_check") ?? "no answer"
            guard check == "ok" else { throw SQLiteEventLogBackupError.copyDamaged(partial, check) }
            let head = try to.scalar(SQLiteSchema.headQuery) ?? 0
            let events = try to.scalar("SELECT count(*) FROM events") ?? 0
            let bytes = try to.scalar("SELECT page_count * page_size FROM pragma_page_count, pragma_page_size") ?? 0
            return Summary(head: head, events: events, bytes: bytes)
        } catch let error as SQLiteEventLogBackupError {
            throw error
        } catch {
            throw .copyDamaged(partial, "\(error)")
        }
    }

    /// Syncs the source's WAL (`wal`), when it has one: a worker commits with deferred syncs
    /// (`SQLiteDurableHorizon`), so the copy may hold a commit the source's disk does not yet;
    /// after this it does, and a power cut cannot leave the copy ahead of the log. No WAL:
    /// every commit is in the file itself, which SQLite synced when it checkpointed.
    private static func syncWAL(_ wal: String) throws(SQLiteEventLogBackupError) {
        if let failure = FileSync.sync(path: wal, missingIsFine: true) { throw .io(failure) }
    }

    /// Flushes a file (or a directory's entries) to the disk.
    private static func sync(_ path: String) throws(SQLiteEventLogBackupError) {
        if let failure = FileSync.sync(path: path, missingIsFine: false) { throw .io(failure) }
    }
}

/// Why a backup of the SQLite event log was not made; nothing was left at the destination.
public enum SQLiteEventLogBackupError: Error, Equatable, CustomStringConvertible {
    /// The destination exists: a backup never overwrites.
    case destinationExists(String)
    /// A `.partial` file of another backup (running, or interrupted) is in the way.
    case partialExists(String)
    case sourceUnavailable(String)
    case notAnEventLog(String, String)
    /// The copy failed SQLite's integrity check.
    case copyDamaged(String, String)
    case io(String)

    public var description: String {
        switch self {
        case .destinationExists(let path): "\(path) exists; a backup never overwrites: choose a new name"
        case .partialExists(let path):
            "\(path) exists: another backup is writing it, or one was interrupted (then remove it)"
        case .sourceUnavailable(let problem): problem
        case .notAnEventLog(let path, let reason): "\(path) is not a Logbook event log: \(reason)"
        case .copyDamaged(let path, let check): "the copy \(path) failed its integrity check: \(check)"
        case .io(let problem): problem
        }
    }
}
