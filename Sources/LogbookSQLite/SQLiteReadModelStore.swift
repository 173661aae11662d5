import Foundation
public import LogbookApplication
import Synchronization

/// The read models in a SQLite file of their own (never the event log's file): WAL
/// journal, `synchronous=NORMAL` (the log is the source of truth, so losing the last
/// commits in a power cut only means applying them again), and the checkpoint in the same
/// transaction as the rows it covers, so it is never ahead of them. The file is marked
/// with `application_id` "LOGR" and a schema version; `secure_delete` is on, so the row of
/// a deleted or forgotten user is overwritten in the file (once the WAL holding its old
/// page is checkpointed, and at the latest when the last connection closes). An event log, another program's
/// database, a file that is not a database and a newer schema are refused with
/// `ReadModelStoreError.notAReadModel` / `.unsupportedSchema`, and nothing is written to them.
///
/// `isComplete` is false for a newly created file until `markComplete()`: a rebuild creates
/// a new file, applies the log from position 1 and marks it complete once it has reached
/// the head, so a file left behind by an interrupted rebuild is never mistaken for a
/// finished one. Queries read through a `SQLiteReadModelReader` on the same file, which
/// may run on another thread (or process) while this store writes.
///
/// A bulk load (`beginBulkLoad()`, for a rebuild) keeps the rows of many batches in a
/// `ReadModelChangeBuffer` and writes them once a batch takes it to `bulkFlushRows` rows
/// or `bulkFlushTextBytes` bytes of text, or at `endBulkLoad()`: a rebuild mostly changes
/// rows it created itself, so far fewer rows are written than events applied. Each write
/// is one transaction with the checkpoint it covers, made without a journal or syncs
/// (`SQLiteBulkLoadJournal`); `endBulkLoad()` syncs the file once and returns it to the WAL.
public final class SQLiteReadModelStore: ReadModelStore {
    public let path: String
    private let connection: Mutex<SQLiteConnection>
    /// Taken before `connection` whenever both are needed.
    private let bulkLoad = Mutex<BulkLoad?>(nil)
    private let bulkFlushRows: Int
    private let bulkFlushTextBytes: Int

    /// Opens the store at `path`, creating the file and its schema when there is none.
    /// - Parameters:
    ///   - busyTimeoutMilliseconds: how long to wait for another connection's lock.
    ///   - bulkFlushRows: how many rows a bulk load holds in memory before it writes them:
    ///     the more it holds, the fewer rows it writes more than once, and the default keeps
    ///     a query process within its memory target during a rebuild of a log of small events.
    ///   - bulkFlushTextBytes: how many bytes of text (`ReadModelChangeBuffer.textBytes`)
    ///     a bulk load holds before it writes them, whatever the rows (one batch, at most a
    ///     page, may take it over): events may be large, so rows alone bound no memory. A log
    ///     of small events reaches the row bound first.
    public init(
        path: String, busyTimeoutMilliseconds: Int = 5_000, bulkFlushRows: Int = 50_000,
        bulkFlushTextBytes: Int = 16 << 20
    ) throws(ReadModelStoreError) {
        self.path = path
        self.bulkFlushRows = max(1, bulkFlushRows)
        self.bulkFlushTextBytes = max(1, bulkFlushTextBytes)
        let db = try SQLiteReadModelTables.open(path)
        let tables = SQLiteReadModelTables(db: db, path: path)
        try Self.prepare(tables, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        connection = Mutex(db)
    }

    /// Checks the file before touching it, switches it to WAL and creates the schema inside
    /// a write transaction that checks again.
    private static func prepare(_ tables: SQLiteReadModelTables, busyTimeoutMilliseconds: Int)
        throws(ReadModelStoreError)
    {
        let db = tables.db
        try tables.sql { () throws(SQLiteError) in try db.execute("PRAGMA busy_timeout = \(busyTimeoutMilliseconds)") }
        let identity = try tables.identity()
        try enableWAL(tables, attempts: max(1, busyTimeoutMilliseconds / 10))
        try tables.sql { () throws(SQLiteError) in
            try db.execute(
                "PRAGMA synchronous = NORMAL; PRAGMA cache_size = -8192; PRAGMA secure_delete = ON;")
            db.setAutomaticCheckpoint(pages: SQLiteReadModelCheckpoints.livePages)
        }
        guard case .empty = identity else { return }
        try tables.transaction("BEGIN IMMEDIATE") { () throws(ReadModelStoreError) in
            guard case .empty = try tables.identity() else { return }
            try tables.sql { () throws(SQLiteError) in
                try db.execute(
                    "\(SQLiteReadModelSchema.create) PRAGMA application_id = \(SQLiteReadModelSchema.applicationId); "
                        + "PRAGMA user_version = \(SQLiteReadModelSchema.version);")
            }
        }
    }

    /// Switching to WAL needs a moment with no other connection in a transaction; a busy
    /// answer is retried.
    private static func enableWAL(_ tables: SQLiteReadModelTables, attempts: Int) throws(ReadModelStoreError) {
        for attempt in 1...attempts {
            do {
                guard try tables.db.text("PRAGMA journal_mode = WAL")?.lowercased() == "wal" else {
                    throw ReadModelStoreError.unavailable("\(tables.path): the WAL journal cannot be enabled")
                }
                return
            } catch let error as SQLiteError where error.isBusy && attempt < attempts {
                usleep(10_000)
            } catch let error as SQLiteError {
                throw SQLiteReadModelTables.storeError(error, path: tables.path)
            } catch let error as ReadModelStoreError {
                throw error
            } catch {
                throw .failed("\(tables.path): \(error)")
            }
        }
    }

    private func withTables<T: Sendable>(_ body: (inout SQLiteReadModelTables) throws(ReadModelStoreError) -> T)
        throws(ReadModelStoreError) -> T
    {
        try connection.withLock { (db: inout SQLiteConnection) throws(ReadModelStoreError) -> T in
            var tables = SQLiteReadModelTables(db: db, path: path)
            return try body(&tables)
        }
    }

    /// The checkpoint written in the file; during a bulk load, the position applied through.
    public func checkpoint() throws(ReadModelStoreError) -> Int64 {
        if let applied = bulkLoad.withLock({ $0?.applied }) { return applied }
        return try storedCheckpoint()
    }

    private func storedCheckpoint() throws(ReadModelStoreError) -> Int64 {
        try withTables { (tables: inout SQLiteReadModelTables) throws(ReadModelStoreError) in try tables.checkpoint() }
    }

    /// Events decoded per task of `apply`. A batch of more than one chunk is decoded on
    /// Dispatch's global queue, chunks in parallel, while this thread writes the rows of
    /// the chunks already decoded, in order: a long catch-up or a rebuild uses every core.
    static let chunkSize = 256

    public func apply(_ events: some EventBatch, through position: Int64) throws(ReadModelStoreError) {
        try apply(
            check: { checkpoint throws(ReadModelStoreError) in
                try Projector.check(events, through: position, checkpoint: checkpoint)
            }, chunks: Self.chunks(of: events), events: events.count, through: position)
    }

    /// Checks a batch against the checkpoint (`check`), then folds the changes of its chunks (decoded on
    /// Dispatch's pool) into the bulk load, or applies them now in one transaction.
    private func apply(
        check: (_ checkpoint: Int64) throws(ReadModelStoreError) -> Void, chunks: @autoclosure () -> [DecodingChunk],
        events: Int, through position: Int64
    )
        throws(ReadModelStoreError)
    {
        try bulkLoad.withLock { (state: inout BulkLoad?) throws(ReadModelStoreError) in
            guard var load = state else {
                return try applyNow(check: check, chunks: chunks, events: events, through: position)
            }
            // Taken out while it changes, so the buffer is not copied.
            state = nil
            defer { state = load }
            if let failure = load.failure { throw failure }
            try check(load.applied)
            // Everything is decoded before anything is buffered: a batch is taken whole or not at all.
            let decoded = try chunks().map { chunk throws(ReadModelStoreError) in try chunk.changes() }
            for chunk in decoded { load.buffer.write(contentsOf: chunk) }
            load.applied = position
            if load.buffer.count >= bulkFlushRows || load.buffer.textBytes >= bulkFlushTextBytes { try flush(&load) }
        }
    }

    /// Applies a batch of `events` events in one transaction with its checkpoint.
    private func applyNow(
        check: (_ checkpoint: Int64) throws(ReadModelStoreError) -> Void, chunks: () -> [DecodingChunk],
        events: Int, through position: Int64
    ) throws(ReadModelStoreError) {
        try withTables { (tables: inout SQLiteReadModelTables) throws(ReadModelStoreError) in
            tables.db.setAutomaticCheckpoint(pages: SQLiteReadModelCheckpoints.pages(forBatchOf: events))
            try tables.transaction("BEGIN IMMEDIATE") { () throws(ReadModelStoreError) in
                let checkpoint = try tables.checkpoint()
                try check(checkpoint)
                // A chunk that cannot be decoded throws here, and the transaction rolls back.
                // The changes of the whole batch are folded first (`ReadModelChangeBuffer`):
                // a busy row is written once per batch, not once per event.
                var changes = ReadModelChangeBuffer()
                for chunk in chunks() { changes.write(contentsOf: try chunk.changes()) }
                try changes.drain { change throws(ReadModelStoreError) in try tables.write(change) }
                if position != checkpoint { try tables.setCheckpoint(position) }
            }
        }
    }

    /// A batch in chunks being decoded: on Dispatch's global queue when there is more than
    /// one, else on this thread when asked.
    private static func chunks(of events: some EventBatch) -> [DecodingChunk] {
        let count = events.count
        guard count > chunkSize else { return [DecodingChunk(events, 0..<count, now: true)] }
        return stride(from: 0, to: count, by: chunkSize).map { start in
            DecodingChunk(events, start..<min(start + chunkSize, count), now: false)
        }
    }

    public func beginBulkLoad() throws(ReadModelStoreError) {
        try bulkLoad.withLock { (state: inout BulkLoad?) throws(ReadModelStoreError) in
            guard state == nil else { return }
            guard try !isComplete else {
                throw .failed("\(path): a complete store is read by queries; only a new one can be bulk loaded")
            }
            let applied = try storedCheckpoint()
            let withoutJournal = try withTables { (tables: inout SQLiteReadModelTables) throws(ReadModelStoreError) in
                try SQLiteBulkLoadJournal.begin(tables)
            }
            state = BulkLoad(applied: applied, withoutJournal: withoutJournal)
        }
    }

    public func endBulkLoad() throws(ReadModelStoreError) {
        try bulkLoad.withLock { (state: inout BulkLoad?) throws(ReadModelStoreError) in
            guard var load = state else { return }
            if let failure = load.failure { throw failure }
            try flush(&load)
            do throws(ReadModelStoreError) {
                let withoutJournal = load.withoutJournal
                try withTables { (tables: inout SQLiteReadModelTables) throws(ReadModelStoreError) in
                    try SQLiteBulkLoadJournal.end(tables, withoutJournal: withoutJournal)
                }
            } catch {
                load.failure = error
                state = load
                throw error
            }
            state = nil
        }
    }

    /// Writes the buffered rows and the checkpoint in one transaction. A failure ends the
    /// bulk load: the rows it held are gone, so every later call reports it.
    private func flush(_ load: inout BulkLoad) throws(ReadModelStoreError) {
        let applied = load.applied
        do {
            try withTables { (tables: inout SQLiteReadModelTables) throws(ReadModelStoreError) in
                try tables.transaction("BEGIN IMMEDIATE") { () throws(ReadModelStoreError) in
                    try load.buffer.drain { change throws(ReadModelStoreError) in try tables.write(change) }
                    try tables.setCheckpoint(applied)
                }
            }
        } catch {
            load.failure = error
            throw error
        }
    }

    public var isComplete: Bool {
        get throws(ReadModelStoreError) {
            try withTables { (tables: inout SQLiteReadModelTables) throws(ReadModelStoreError) in
                try tables.isComplete()
            }
        }
    }

    public func markComplete() throws(ReadModelStoreError) {
        try withTables { (tables: inout SQLiteReadModelTables) throws(ReadModelStoreError) in
            try tables.markComplete()
        }
    }

    /// The journal mode and `synchronous` level SQLite reports for this store's connection:
    /// `("wal", 1)` means WAL with `synchronous=NORMAL`.
    public func durabilitySettings() throws(ReadModelStoreError) -> (journalMode: String, synchronous: Int) {
        try withTables { (tables: inout SQLiteReadModelTables) throws(ReadModelStoreError) in
            try tables.sql { () throws(SQLiteError) in
                (try tables.db.text("PRAGMA journal_mode") ?? "", Int(try tables.db.scalar("PRAGMA synchronous") ?? -1))
            }
        }
    }
}

/// What a bulk load holds between batches.
private struct BulkLoad {
    var buffer = ReadModelChangeBuffer()
    /// The position applied through (buffered or written).
    var applied: Int64
    /// Why a write failed; the bulk load cannot go on after one.
    var failure: ReadModelStoreError?
    /// Whether the file is written without a journal (`SQLiteBulkLoadJournal`).
    let withoutJournal: Bool

    init(applied: Int64, withoutJournal: Bool) {
        self.applied = applied
        self.withoutJournal = withoutJournal
    }
}

/// A chunk of events being turned into row changes, on Dispatch's global queue or (`now`)
/// at once on the calling thread; `changes()` waits for the outcome.
private final class DecodingChunk: Sendable {
    private let outcome = Mutex<Result<[ReadModelChange], ReadModelStoreError>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    init(_ events: some EventBatch, _ indices: Range<Int>, now: Bool) {
        let decode: @Sendable () -> Void = { [self] in
            let result = Result { () throws(ReadModelStoreError) in try events.readModelChanges(indices) }
            outcome.withLock { $0 = result }
            done.signal()
        }
        if now {
            decode()
        } else {
            DispatchQueue.global(qos: .userInitiated).async(execute: decode)
        }
    }

    func changes() throws(ReadModelStoreError) -> [ReadModelChange] {
        done.wait()
        return try outcome.withLock { $0! }.get()
    }
}
