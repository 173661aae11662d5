import Foundation
public import LogbookApplication
import Synchronization

/// The read models in a SQLite file of their own (never the event log's file): WAL
/// journal, `synchronous=NORMAL` (the log is the source of truth, so losing the last
/// commits in a power cut only means applying them again), and the checkpoint in the same
/// transaction as the rows it covers, so it is never ahead of them. The file is marked
/// with `application_id` "LOGR" and a schema version; an event log, another program's
/// database, a file that is not a database and a newer schema are refused with
/// `ReadModelStoreError.notAReadModel` / `.unsupportedSchema`, and nothing is written to them.
///
/// `isComplete` is false for a newly created file until `markComplete()`: a rebuild creates
/// a new file, applies the log from position 1 and marks it complete once it has reached
/// the head, so a file left behind by an interrupted rebuild is never mistaken for a
/// finished one. Queries read through a `SQLiteReadModelReader` on the same file, which
/// may run on another thread (or process) while this store writes.
public final class SQLiteReadModelStore: ReadModelStore {
    public let path: String
    private let connection: Mutex<SQLiteConnection>

    /// Opens the store at `path`, creating the file and its schema when there is none.
    /// - Parameter busyTimeoutMilliseconds: how long to wait for another connection's lock.
    public init(path: String, busyTimeoutMilliseconds: Int = 5_000) throws(ReadModelStoreError) {
        self.path = path
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
                "PRAGMA synchronous = NORMAL; PRAGMA cache_size = -65536; PRAGMA wal_autocheckpoint = 10000;")
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

    public func checkpoint() throws(ReadModelStoreError) -> Int64 {
        try withTables { (tables: inout SQLiteReadModelTables) throws(ReadModelStoreError) in try tables.checkpoint() }
    }

    /// Events decoded per task of `apply`. A batch of more than one chunk is decoded on
    /// Dispatch's global queue, chunks in parallel, while this thread writes the rows of
    /// the chunks already decoded, in order: a long catch-up or a rebuild uses every core.
    static let chunkSize = 256

    public func apply(_ events: [RecordedEvent], through position: Int64) throws(ReadModelStoreError) {
        try withTables { (tables: inout SQLiteReadModelTables) throws(ReadModelStoreError) in
            try tables.transaction("BEGIN IMMEDIATE") { () throws(ReadModelStoreError) in
                let checkpoint = try tables.checkpoint()
                try Projector.check(events, through: position, checkpoint: checkpoint)
                if events.count <= Self.chunkSize {
                    try Projector.apply(try Projector.decode(events[...]), to: &tables)
                } else {
                    let chunks = stride(from: 0, to: events.count, by: Self.chunkSize).map { start in
                        DecodingChunk(events[start..<min(start + Self.chunkSize, events.count)])
                    }
                    // A chunk that cannot be decoded throws here, and the transaction rolls back.
                    for chunk in chunks { try Projector.apply(try chunk.events(), to: &tables) }
                }
                if position != checkpoint { try tables.setCheckpoint(position) }
            }
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

/// A chunk of events being decoded on Dispatch's global queue; `events()` waits for the outcome.
private final class DecodingChunk: Sendable {
    private let outcome = Mutex<Result<[ProjectedEvent], ReadModelStoreError>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    init(_ events: ArraySlice<RecordedEvent>) {
        DispatchQueue.global(qos: .userInitiated).async { [self] in
            let result = Result { () throws(ReadModelStoreError) in try Projector.decode(events) }
            outcome.withLock { $0 = result }
            done.signal()
        }
    }

    func events() throws(ReadModelStoreError) -> [ProjectedEvent] {
        done.wait()
        return try outcome.withLock { $0! }.get()
    }
}
