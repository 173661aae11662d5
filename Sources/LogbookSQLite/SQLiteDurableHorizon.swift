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
/// After a failed sync the horizon stays where it was and every later flush fails:
/// Linux may drop the pages that failed to reach the disk and report the next sync clean,
/// so only a restart, which reads what the disk holds, may move it again.
public final class SQLiteDurableHorizon: LogFlusher {
    private let durable: Atomic<Int64>
    private let committed: Atomic<Int64>
    private let state = Mutex(WALFile())

    /// The WAL file's descriptor (ours, apart from SQLite's), and whether a sync failed.
    private struct WALFile: ~Copyable {
        var descriptor: Int32 = -1
        var path = ""
        var failure: String?
    }

    /// A horizon at `durableHead`: what the log held, on disk, when the process opened it.
    public init(durableHead: Int64) {
        durable = Atomic(durableHead)
        committed = Atomic(durableHead)
    }

    /// The last position a flush covered: readers stop here.
    public var durableHead: Int64 { durable.load(ordering: .acquiring) }

    /// The last position the writer committed (durable or not).
    public var committedHead: Int64 { committed.load(ordering: .acquiring) }

    /// The writer committed up to `head` (its own thread, after `COMMIT` returned).
    func committed(through head: Int64) {
        committed.store(head, ordering: .releasing)
    }

    /// The writer's connection opened the log at `walPath` and holds its WAL open: syncs it
    /// (and its directory, for a WAL file just created), then takes `head`, which the writer
    /// read before, as durable. Another writer's horizon file is closed first.
    func attach(walPath: String, head: Int64) throws(EventStoreError) {
        let attached: Result<Void, EventStoreError> = state.withLock { file in
            if file.descriptor >= 0 { close(file.descriptor) }
            file.descriptor = open(walPath, O_RDONLY | O_CLOEXEC)
            file.path = walPath
            guard file.descriptor >= 0 else {
                return .failure(.unavailable("cannot open \(walPath): \(String(cString: strerror(errno)))"))
            }
            let directory = (walPath as NSString).deletingLastPathComponent
            if let failure = Self.sync(file.descriptor, walPath) ?? Self.syncDirectory(directory) {
                return .failure(.unavailable(failure, cause: .ioError))
            }
            return .success(())
        }
        try attached.get()
        committed.store(head, ordering: .releasing)
        durable.store(head, ordering: .releasing)
    }

    /// The writer's connection is closing: its WAL descriptor is closed with it.
    func detach() {
        state.withLock { file in
            if file.descriptor >= 0 { close(file.descriptor) }
            file.descriptor = -1
        }
    }

    public func flush() throws(EventStoreError) {
        let flushed: Result<Void, EventStoreError> = state.withLock { file in
            if let failure = file.failure { return .failure(.unavailable(failure, cause: .ioError)) }
            guard file.descriptor >= 0 else {
                return .failure(.unavailable("the log's WAL is not open for syncing", cause: .ioError))
            }
            // Read before the sync: every commit up to here wrote its frames before it.
            let target = committed.load(ordering: .acquiring)
            if let failure = Self.sync(file.descriptor, file.path) {
                file.failure =
                    "\(failure); nothing committed after position \(durable.load(ordering: .relaxed)) "
                    + "is durable until the worker restarts"
                return .failure(.unavailable(file.failure ?? failure, cause: .ioError))
            }
            if target > durable.load(ordering: .relaxed) { durable.store(target, ordering: .releasing) }
            return .success(())
        }
        try flushed.get()
    }

    private static func sync(_ descriptor: Int32, _ path: String) -> String? {
        while fdatasync(descriptor) != 0 {
            if errno == EINTR { continue }
            return "cannot sync \(path): \(String(cString: strerror(errno)))"
        }
        return nil
    }

    private static func syncDirectory(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return "cannot open \(path): \(String(cString: strerror(errno)))" }
        defer { close(descriptor) }
        return sync(descriptor, path)
    }

    deinit { detach() }
}
