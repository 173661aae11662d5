import Foundation
public import LogbookApplication
import Synchronization

/// The log's durable head, shared by one process's connections to a SQLite log whose
/// writer commits with deferred syncs: the writer (`SQLiteEventStore(durability:
/// .deferredSyncs(horizon))`) commits with `synchronous=NORMAL`, so `COMMIT` writes its WAL
/// frames and returns without waiting for the disk, and this horizon's `flush()`, called on
/// a thread of its own, `fdatasync`s the WAL file. Readers opened with `.readsDurable(horizon)`
/// stop at the durable head, so no reply, feed message or log page ever carries an event a
/// power cut could take back.
///
/// Why this is as safe as `synchronous=FULL` for an acknowledged command: the WAL is
/// appended in commit order, and SQLite's recovery keeps the longest run of frames whose
/// checksums chain, so what survives a power cut is a prefix of the commits, and a sync
/// begun after a commit returned covers it and everything before it. A checkpoint syncs the
/// WAL before it copies any frame into the database file (it does so at every
/// `synchronous` level but OFF), so the file never holds a frame the WAL could lose.
///
/// After a failed sync the horizon stays where it was and every later flush fails: Linux
/// may drop the pages that failed to reach the disk and report the next sync clean, so
/// this process can never again say what is durable. (A restart reads what the page cache
/// holds, which may not be what the disk holds: the disk needs an operator's look first.)
public final class SQLiteDurableHorizon: LogFlusher {
    private let durable: Atomic<Int64>
    private let committed: Atomic<Int64>
    private let state = Mutex(WALFile())

    /// The WAL file's descriptor (ours, apart from SQLite's), which writer attached it, and
    /// whether a sync failed.
    private struct WALFile: ~Copyable {
        var descriptor: Int32 = -1
        var path = ""
        var writer = 0
        var failure: String?
    }

    /// A horizon at `durableHead`, for a log that is on disk up to there.
    public init(durableHead: Int64) {
        durable = Atomic(durableHead)
        committed = Atomic(durableHead)
    }

    /// A horizon for the log at `path` as it is now: opens it (as any store does: created
    /// or migrated if needed, refused if it is not a log), reads its head, then syncs its WAL,
    /// so that what a killed writer left in the page cache is on disk before any reader of
    /// this horizon serves it.
    public static func opening(path: String, evolution: EventEvolution = .standard) throws(EventStoreError)
        -> SQLiteDurableHorizon
    {
        let store = try SQLiteEventStore(path: path, evolution: evolution)
        let head = try store.headPosition()
        if let wal = store.walPath, let failure = FileSync.sync(path: wal, missingIsFine: true) {
            throw .unavailable(failure, cause: .ioError)
        }
        return SQLiteDurableHorizon(durableHead: head)
    }

    /// The last position a flush covered: readers stop here.
    public var durableHead: Int64 { durable.load(ordering: .acquiring) }

    /// The last position the writer committed (durable or not).
    public var committedHead: Int64 { committed.load(ordering: .acquiring) }

    /// The writer committed up to `head` (its own thread, after `COMMIT` returned).
    func committed(through head: Int64) {
        committed.store(head, ordering: .releasing)
    }

    /// A writer's connection opened the log and holds its WAL at `walPath` open: syncs it
    /// (and its directory, for a WAL file just created), then takes `head`, which the writer
    /// read before, as durable. Returns the writer's ticket for `detach`; an earlier
    /// writer's descriptor is closed.
    func attach(walPath: String, head: Int64) throws(EventStoreError) -> Int {
        let attached: Result<Int, EventStoreError> = state.withLock { file in
            if file.descriptor >= 0 { close(file.descriptor) }
            file.writer += 1
            file.descriptor = open(walPath, O_RDONLY | O_CLOEXEC)
            file.path = walPath
            guard file.descriptor >= 0 else {
                return .failure(.unavailable("cannot open \(walPath): \(String(cString: strerror(errno)))"))
            }
            if let failure = FileSync.sync(file.descriptor, path: walPath, dataOnly: true)
                ?? FileSync.syncDirectory(containing: walPath)
            {
                return .failure(.unavailable(failure, cause: .ioError))
            }
            return .success(file.writer)
        }
        let ticket = try attached.get()
        committed.store(head, ordering: .releasing)
        durable.store(head, ordering: .releasing)
        return ticket
    }

    /// The writer with `ticket` is closing: its WAL descriptor is closed with it (not a
    /// later writer's).
    func detach(_ ticket: Int) {
        state.withLock { file in
            guard file.writer == ticket, file.descriptor >= 0 else { return }
            close(file.descriptor)
            file.descriptor = -1
        }
    }

    /// A reader found the log's head at `head`, past everything this horizon's writer
    /// committed: another connection wrote it (a second writer, a repair by hand). Syncs the
    /// WAL (the writer's descriptor, or `walPath` while no writer is attached), after which
    /// what the reader saw is on disk, and moves the horizon there. Nothing moves after a
    /// failed sync.
    func adopt(foreignHead head: Int64, walPath: String?) throws(EventStoreError) {
        let adopted: Result<Void, EventStoreError> = state.withLock { file in
            if let failure = file.failure { return .failure(.unavailable(failure, cause: .ioError)) }
            let failure =
                file.descriptor >= 0
                ? FileSync.sync(file.descriptor, path: file.path, dataOnly: true)
                : walPath.flatMap { FileSync.sync(path: $0, missingIsFine: true) }
            if let failure { return .failure(.unavailable(failure, cause: .ioError)) }
            if head > committed.load(ordering: .relaxed) { committed.store(head, ordering: .releasing) }
            if head > durable.load(ordering: .relaxed) { durable.store(head, ordering: .releasing) }
            return .success(())
        }
        try adopted.get()
    }

    public func flush() throws(EventStoreError) {
        let flushed: Result<Void, EventStoreError> = state.withLock { file in
            if let failure = file.failure { return .failure(.unavailable(failure, cause: .ioError)) }
            guard file.descriptor >= 0 else {
                return .failure(.unavailable("the log's WAL is not open for syncing", cause: .ioError))
            }
            // Read before the sync: every commit up to here wrote its frames before it.
            let target = committed.load(ordering: .acquiring)
            if let failure = FileSync.sync(file.descriptor, path: file.path, dataOnly: true) {
                let failure =
                    "\(failure); nothing committed after position \(durable.load(ordering: .relaxed)) "
                    + "can be said to be durable by this process"
                file.failure = failure
                return .failure(.unavailable(failure, cause: .ioError))
            }
            if target > durable.load(ordering: .relaxed) { durable.store(target, ordering: .releasing) }
            return .success(())
        }
        try flushed.get()
    }

    deinit {
        state.withLock { file in
            if file.descriptor >= 0 { close(file.descriptor) }
        }
    }
}
