import CSQLite
import Foundation
public import LogbookApplication
import Synchronization

/// The event log in one SQLite file: WAL journal, `synchronous=FULL`, so an append that
/// returned is on disk (unless opened `.deferredSyncs`, see `Durability`). Several
/// processes may open the same file; writers take turns.
/// Refuses, with `EventStoreError.notAnEventLog`, a file that is not a database or
/// belongs to another program, and one written by a newer schema. A file of an older
/// schema is migrated when opened. Each event is stored with its type's schema version
/// and read back in the current shape through `evolution`'s upcasters. With
/// `backgroundCheckpoints`, the WAL is copied back into the file by a thread of its own
/// (`SQLiteCheckpointer`) instead of inside this connection's commits. With `durability`
/// other than `.syncEachCommit`, the store is one of a process's connections around a
/// `SQLiteDurableHorizon`: its writer, whose appends return before their sync (the horizon
/// flushes them), or a reader that sees only what the horizon says is durable.
public final class SQLiteEventStore: EventStore {
    /// When an append is durable, and what this connection's reads see.
    public enum Durability: Sendable {
        /// `synchronous=FULL`: an append that returned is on disk; reads see every commit.
        case syncEachCommit
        /// This connection is the writer of `horizon`: `synchronous=NORMAL`, an append is
        /// durable once `horizon.flush()` began after it returned; its own reads see every
        /// commit (it decides on them). Not `EventStore`'s promise of a durable `append`: only
        /// for a caller that flushes before it reports anything (the worker's `CommitStage`).
        case deferredSyncs(SQLiteDurableHorizon)
        /// This connection reads up to `horizon.durableHead` only: its head, its pages, its
        /// streams and the command records of commands that appended events stop there (a
        /// command that appended nothing keeps only the head of its time, so its record is
        /// not held back). Its `headPosition` also finds what another connection wrote past
        /// the horizon's writer and, once synced, moves the horizon there. It refuses appends.
        case readsDurable(SQLiteDurableHorizon)
    }

    public let path: String
    private let session: Mutex<Session>
    private let evolution: EventEvolution
    private let checkpointer: SQLiteCheckpointer?
    private let durability: Durability
    /// A deferred-sync writer's ticket with its horizon (`SQLiteDurableHorizon.attach`).
    private let horizonTicket: Int
    /// How long a statement waits for another connection's lock (all but `takeTurnIfFree`).
    let busyTimeoutMilliseconds: Int

    /// Opens (creating or migrating if needed) the log at `path`. Several processes may do so at once.
    /// - Parameters:
    ///   - evolution: the event types' schema versions and upcasters.
    ///   - busyTimeoutMilliseconds: how long to wait for another writer's lock.
    ///   - backgroundCheckpoints: checkpoint on a thread of its own, started at the first
    ///     checkpoint (for a process that appends a lot: the worker).
    ///   - durability: when appends are durable and what reads see (see `Durability`).
    ///   - pageCacheKibibytes: this connection's page cache; nil keeps SQLite's default.
    ///     A writer whose batches touch more pages than that (random stream and
    ///     command ids land on random index pages) otherwise writes dirty pages to the WAL
    ///     before its commit and reads evicted ones again (`pageCacheCounters`).
    public init(
        path: String, evolution: EventEvolution = .standard, busyTimeoutMilliseconds: Int = 5_000,
        backgroundCheckpoints: Bool = false, durability: Durability = .syncEachCommit,
        pageCacheKibibytes: Int? = nil
    ) throws(EventStoreError) {
        precondition((pageCacheKibibytes ?? 1) > 0, "a page cache of \(pageCacheKibibytes ?? 0) KiB")
        self.path = path
        self.evolution = evolution
        self.durability = durability
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        let connection: SQLiteConnection
        do {
            connection = try SQLiteConnection(path: path)
        } catch {
            throw .unavailable("cannot open \(path): \(error)", cause: .cannotOpen)
        }
        do {
            try Self.prepare(connection, path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
            // A negative cache_size is a size in KiB (a positive one counts pages).
            if let pageCacheKibibytes { try connection.execute("PRAGMA cache_size = -\(pageCacheKibibytes)") }
        } catch let error as EventStoreError {
            throw error
        } catch let error as SQLiteError {
            try? connection.execute("ROLLBACK")
            throw Self.storeError(error, path: path)
        } catch {
            throw .unavailable("\(path): \(error)")
        }
        if backgroundCheckpoints {
            let checkpointer = SQLiteCheckpointer(path: path)
            connection.checkpoint(in: checkpointer)
            self.checkpointer = checkpointer
        } else {
            checkpointer = nil
        }
        let appender: SQLiteAppender
        do {
            appender = try SQLiteAppender(connection, evolution: evolution)
            if case .deferredSyncs(let horizon) = durability {
                try connection.execute("PRAGMA synchronous = NORMAL")
                appender.committed = { head in horizon.committed(through: head) }
                // Read first, synced after: what this reads is durable once the sync returns.
                let head = try connection.scalar(SQLiteSchema.headQuery) ?? 0
                guard let wal = connection.walPath else { throw EventStoreError.unavailable("\(path) has no WAL file") }
                horizonTicket = try horizon.attach(walPath: wal, head: head)
            } else {
                horizonTicket = 0
            }
        } catch let error as SQLiteError {
            throw Self.storeError(error, path: path)
        } catch let error as EventStoreError {
            throw error
        } catch {
            throw .failed("\(path): \(error)")
        }
        self.session = Mutex(Session(db: connection, appender: appender))
    }

    deinit {
        if case .deferredSyncs(let horizon) = durability { horizon.detach(horizonTicket) }
        guard let checkpointer else { return }
        session.withLock { $0.db.removeWALHook() }
        checkpointer.stop()
    }

    /// The path of this log's WAL file, as SQLite names it.
    var walPath: String? { session.withLock { $0.db.walPath } }

    /// The last position this connection's reads may see: the horizon's durable head for a
    /// `.readsDurable` reader, no limit otherwise.
    private var readableHead: Int64 {
        if case .readsDurable(let horizon) = durability { return horizon.durableHead }
        return .max
    }

    /// The size of this connection's page cache, in KiB (`PRAGMA cache_size`).
    public var pageCacheKibibytes: Int {
        get throws(EventStoreError) {
            try withConnection { db throws in
                // The pragmas' table forms: a kept statement reads them anew each time it runs
                // (a `PRAGMA` statement's answer is fixed when it is prepared).
                let size = try db.scalar("SELECT cache_size FROM pragma_cache_size") ?? 0
                // Negative: KiB; positive: pages.
                return Int(
                    size < 0 ? -size : size * (try db.scalar("SELECT page_size FROM pragma_page_size") ?? 0) / 1_024)
            }
        }
    }

    /// What this connection's page cache did so far (see `pageCacheKibibytes`).
    public var pageCacheCounters: SQLitePageCacheCounters { session.withLock { $0.db.pageCacheCounters } }

    /// Checkpoints the background thread ran so far, and those that failed (nil without
    /// `backgroundCheckpoints`).
    public var backgroundCheckpointCounts: (checkpoints: Int, failures: Int)? { checkpointer?.counts }

    /// Checks that the file is a Logbook log (or empty) before touching it, switches it to
    /// WAL, and creates or migrates the schema inside a write transaction that re-checks,
    /// so that two processes opening the same file at once agree on one schema.
    private static func prepare(_ db: SQLiteConnection, path: String, busyTimeoutMilliseconds: Int) throws {
        try db.execute("PRAGMA busy_timeout = \(busyTimeoutMilliseconds)")
        let state = try fileState(db, path: path)
        try enableWAL(db, path: path, attempts: max(1, busyTimeoutMilliseconds / 10))
        try db.execute("PRAGMA synchronous = FULL")
        guard state != .current else { return }
        try db.execute("BEGIN IMMEDIATE")
        switch try fileState(db, path: path) {
        case .current: break
        case .empty:
            try db.execute(
                "\(SQLiteSchema.create) PRAGMA application_id = \(SQLiteSchema.applicationId); "
                    + "PRAGMA user_version = \(SQLiteSchema.version);")
        case .older(let version):
            for step in version..<SQLiteSchema.version {
                guard let migration = SQLiteSchema.migrations[step] else {
                    throw EventStoreError.failed("no migration from schema version \(step)")
                }
                try db.execute(migration)
            }
            try db.execute("PRAGMA user_version = \(SQLiteSchema.version)")
        }
        try db.execute("COMMIT")
    }

    /// What `prepare` finds in a file.
    private enum FileState: Equatable {
        case empty
        case current
        case older(Int64)
    }

    /// Throws for another program's file, a newer schema, or a Logbook file without a schema version.
    private static func fileState(_ db: SQLiteConnection, path: String) throws -> FileState {
        let tableCount = try db.scalar("SELECT count(*) FROM sqlite_schema") ?? 0
        let applicationId = try db.scalar("PRAGMA application_id") ?? 0
        let version = try db.scalar("PRAGMA user_version") ?? 0
        if tableCount == 0 && applicationId == 0 { return .empty }
        guard applicationId == SQLiteSchema.applicationId else {
            throw EventStoreError.notAnEventLog(
                path: path, reason: "it is another program's SQLite database (application_id \(applicationId))")
        }
        guard version <= SQLiteSchema.version else {
            throw EventStoreError.unsupportedSchema(found: Int(version), supported: Int(SQLiteSchema.version))
        }
        guard version >= 1 else { throw EventStoreError.corrupt("\(path): the log has no schema version") }
        return version == SQLiteSchema.version ? .current : .older(version)
    }

    /// Switching to WAL needs a moment with no other connection in a transaction; the busy
    /// handler does not always wait for that, so a busy answer is retried.
    private static func enableWAL(_ db: SQLiteConnection, path: String, attempts: Int) throws {
        for attempt in 1...attempts {
            do {
                guard try db.text("PRAGMA journal_mode = WAL")?.lowercased() == "wal" else {
                    throw EventStoreError.unavailable("\(path): the WAL journal cannot be enabled")
                }
                return
            } catch let error as SQLiteError where error.isBusy && attempt < attempts {
                usleep(10_000)
            }
        }
    }

    static func storeError(_ error: SQLiteError, path: String) -> EventStoreError {
        if error.code & 0xFF == SQLITE_NOTADB {
            return .notAnEventLog(path: path, reason: "it is not a SQLite database")
        }
        if error.isCorruption { return .corrupt("\(path): \(error)") }
        if error.isTransient { return .unavailable("\(path): \(error)", cause: error.cause) }
        return .failed("\(path): \(error)")
    }

    /// The connection and what appends keep on it, used by one caller at a time.
    private struct Session {
        let db: SQLiteConnection
        let appender: SQLiteAppender
    }

    /// Runs `body` on the connection; SQLite's errors and unreadable events become `EventStoreError`s.
    func withConnection<T: Sendable>(
        _ body: (SQLiteConnection) throws -> T
    ) throws(EventStoreError) -> T {
        try withSession { session in try body(session.db) }
    }

    /// Runs `body` on the session; errors as in `withConnection`.
    private func withSession<T: Sendable>(
        _ body: (Session) throws -> T
    ) throws(EventStoreError) -> T {
        let result: Result<T, any Error> = session.withLock { session in
            do { return .success(try body(session)) } catch { return .failure(error) }
        }
        switch result {
        case .success(let value): return value
        case .failure(let error as SQLiteError): throw Self.storeError(error, path: path)
        case .failure(let error as UnreadableEvent):
            throw .unreadableEvent(position: error.position, reason: error.cause.description)
        case .failure(let error): throw .failed("\(path): \(error)")
        }
    }

    /// A stored event that `evolution` cannot bring to the current shape.
    private struct UnreadableEvent: Error {
        var position: Int64
        var cause: EventUpcastError
    }

    // MARK: Append

    /// A `.readsDurable` connection never writes: its horizon's writer appends.
    func refuseWritesIfReader() throws(EventStoreError) {
        if case .readsDurable = durability {
            throw .invalidRequest("this connection only reads (its horizon's writer appends)")
        }
    }

    public func append(_ batch: [AppendRequest]) throws(EventStoreError) -> [AppendResult] {
        if let problem = batch.lazy.compactMap(\.malformation).first { throw .invalidRequest(problem) }
        try refuseWritesIfReader()
        guard !batch.isEmpty else { return [] }
        return try withSession { [evolution] session in
            try session.appender.append(batch) { commandId in
                do {
                    guard let record = try Self.commandRecord(commandId, session.db, evolution) else {
                        throw SQLiteError(code: SQLITE_INTERNAL, message: "command '\(commandId)' vanished")
                    }
                    return .duplicate(record)
                } catch let error as UnreadableEvent {
                    return .unreadableRecord(
                        .unreadableEvent(position: error.position, reason: error.cause.description))
                }
            }
        }
    }

    /// How many streams' versions this store remembers from its appends now (bounded).
    var knownStreams: Int { session.withLock { $0.appender.knownStreams } }

    // MARK: Reads

    private static let columns =
        "position, event_id, stream, version, type, data, command_id, correlation_id, causation_id, recorded_at, "
        + "data_version"

    private static let streamEvents =
        "SELECT \(columns) FROM events WHERE stream = ? AND version >= ? ORDER BY version LIMIT ?"
    private static let wholeStreamEvents = "SELECT \(columns) FROM events WHERE stream = ? ORDER BY version"
    private static let eventsFrom = "SELECT \(columns) FROM events WHERE position >= ? ORDER BY position LIMIT ?"
    private static let eventsBetween = "SELECT \(columns) FROM events WHERE position BETWEEN ? AND ? ORDER BY position"

    /// The events `sql` selects (with `columns`) once `bind` has bound its parameters, each
    /// in its type's current shape.
    private static func events(
        _ sql: String, _ db: SQLiteConnection, _ evolution: EventEvolution,
        bind: (SQLiteStatement) throws(SQLiteError) -> Void
    ) throws -> [RecordedEvent] {
        let statement = try db.statement(sql)
        try bind(statement)
        var events: [RecordedEvent] = []
        try visitRows(of: statement, evolution) { event in
            events.append(event.recordedEvent)
            return true
        }
        return events
    }

    /// Steps `statement` (bound, selecting `columns`), handing each row to `body` as borrowed
    /// bytes of its columns, in its type's current shape, until the rows end or `body`
    /// answers false; then resets it, so that it holds no read transaction. Only a payload
    /// of an older version is copied (to be upcast).
    private static func visitRows(
        of statement: SQLiteStatement, _ evolution: EventEvolution, _ body: (StoredEventBytes) -> Bool
    ) throws {
        defer { statement.reset() }
        while try statement.step() {
            let position = statement.int64(0)
            let type = statement.bytes(4)
            let version = Int(statement.int64(10))
            let more: Bool
            if evolution.isCurrent(type: type, version: version) {
                more = body(row(statement, position: position, type: type, data: statement.bytes(5)))
            } else {
                var data: String
                do {
                    data = try evolution.upcast(
                        type: StoredEventBytes.text(type), version: version, data: statement.string(5))
                } catch {
                    throw UnreadableEvent(position: position, cause: error)
                }
                more = data.withUTF8 { data in body(row(statement, position: position, type: type, data: data)) }
            }
            guard more else { return }
        }
    }

    /// The current row of `statement`, with its payload `data`.
    private static func row(
        _ statement: SQLiteStatement, position: Int64, type: UnsafeBufferPointer<UInt8>,
        data: UnsafeBufferPointer<UInt8>
    ) -> StoredEventBytes {
        StoredEventBytes(
            position: position, eventId: statement.bytes(1), stream: statement.bytes(2),
            version: Int(statement.int64(3)), type: type, data: data, commandId: statement.bytes(6),
            correlationId: statement.bytes(7), causationId: statement.bytes(8), recordedAt: statement.int64(9))
    }

    static func commandRecord(_ commandId: String, _ db: SQLiteConnection, _ evolution: EventEvolution) throws
        -> CommandRecord?
    {
        let lookup = try db.statement(
            "SELECT first_position, last_position, answer FROM commands WHERE command_id = ?")
        try lookup.bind(1, commandId)
        guard try lookup.step() else { return nil }
        let first = lookup.isNull(0) ? nil : lookup.int64(0)
        let last = lookup.int64(1)
        let answer = lookup.isNull(2) ? nil : lookup.string(2)
        lookup.reset()
        guard let first else {
            return .answered(commandId: commandId, position: last, answer: answer ?? "")
        }
        let events = try events(eventsBetween, db, evolution) { statement throws(SQLiteError) in
            try statement.bind(1, first)
            try statement.bind(2, last)
        }
        return .appended(CommittedCommand(commandId: commandId, events: events))
    }

    public func readStream(_ stream: String, fromVersion: Int, limit: Int) throws(EventStoreError) -> [RecordedEvent] {
        let readable = readableHead
        return try withConnection { [evolution] db in
            try Self.events(Self.streamEvents, db, evolution) { statement throws(SQLiteError) in
                try statement.bind(1, stream)
                try statement.bind(2, Int64(fromVersion))
                try statement.bind(3, Int64(max(limit, 0)))
            }
        }.prefix { $0.position <= readable }.map(\.self)
    }

    /// All of them in one read transaction: one snapshot, and SQLite's per-statement cost of
    /// starting and ending a read (the WAL's read lock) paid once instead of once a stream.
    public func readWholeStreams(_ streams: [String]) throws(EventStoreError) -> [String: [RecordedEvent]] {
        guard !streams.isEmpty else { return [:] }
        let readable = readableHead
        return try withConnection { [evolution] db in
            // Inside a write turn (`takeTurnIfFree`) the turn's transaction is the snapshot.
            let begins = !db.isInTransaction
            // Prepared once: the commit stage reads a batch's streams this way every batch.
            if begins { try db.statement("BEGIN").run([]) }
            do {
                var found: [String: [RecordedEvent]] = [:]
                for stream in streams {
                    found[stream] = try Self.events(Self.wholeStreamEvents, db, evolution) {
                        statement throws(SQLiteError) in try statement.bind(1, stream)
                    }.prefix { $0.position <= readable }.map(\.self)
                }
                if begins { try db.statement("COMMIT").run([]) }
                return found
            } catch {
                if begins { try? db.execute("ROLLBACK") }
                throw error
            }
        }
    }

    public func read(fromPosition: Int64, limit: Int, categories: Set<String>?) throws(EventStoreError)
        -> [RecordedEvent]
    {
        try visitedEvents(fromPosition: fromPosition, limit: limit, categories: categories)
    }

    /// Straight from the columns of one statement kept prepared on the connection: no
    /// `String` is made for any field (except the type's name and the payload of an event
    /// written under an older version, to upcast it).
    public func visitEvents(
        fromPosition: Int64, limit: Int, categories: Set<String>?, _ body: (StoredEventBytes) -> Bool
    ) throws(EventStoreError) {
        let readable = readableHead
        try withConnection { [evolution] db in
            let limit = Int64(max(limit, 0))
            let statement: SQLiteStatement
            if let categories {
                let sorted = categories.sorted()
                let placeholders = Array(repeating: "?", count: sorted.count).joined(separator: ", ")
                statement = try db.statement(
                    "SELECT \(Self.columns) FROM events WHERE position >= ? AND category IN (\(placeholders)) "
                        + "ORDER BY position LIMIT ?")
                try statement.bind(1, fromPosition)
                for (offset, category) in sorted.enumerated() { try statement.bind(Int32(offset + 2), category) }
                try statement.bind(Int32(sorted.count + 2), limit)
            } else {
                statement = try db.statement(Self.eventsFrom)
                try statement.bind(1, fromPosition)
                try statement.bind(2, limit)
            }
            try Self.visitRows(of: statement, evolution) { event in event.position <= readable && body(event) }
        }
    }

    /// On a `.readsDurable` reader: the durable head, or, when the log holds more than the
    /// horizon's writer committed (another connection wrote it), that head once the WAL is
    /// synced (`SQLiteDurableHorizon.adopt`).
    public func headPosition() throws(EventStoreError) -> Int64 {
        let head = try withConnection { db in try db.scalar(SQLiteSchema.headQuery) ?? 0 }
        guard case .readsDurable(let horizon) = durability else { return head }
        if head > horizon.committedHead { try horizon.adopt(foreignHead: head, walPath: walPath) }
        return min(head, horizon.durableHead)
    }

    /// The durability settings in force on this store's connection, as SQLite reports them:
    /// `("wal", 2)` means WAL journal with `synchronous=FULL`.
    public func durabilitySettings() throws(EventStoreError) -> (journalMode: String, synchronous: Int) {
        try withConnection { db in
            (try db.text("PRAGMA journal_mode") ?? "", Int(try db.scalar("PRAGMA synchronous") ?? -1))
        }
    }

    public func commandRecord(_ commandId: String) throws(EventStoreError) -> CommandRecord? {
        let readable = readableHead
        let record = try withConnection { [evolution] db in try Self.commandRecord(commandId, db, evolution) }
        return record.flatMap { $0.position <= readable ? $0 : nil }
    }

    /// Every command recorded with an answer and no events (`CommandRecord.answered`), in the
    /// order of the head they were recorded at: what a copy of the log needs besides its events.
    public func answeredCommands() throws(EventStoreError) -> [CommandRecord] {
        let readable = readableHead
        return try withConnection { db in
            let query = try db.statement(
                "SELECT command_id, last_position, answer FROM commands WHERE first_position IS NULL "
                    + "ORDER BY last_position, command_id")
            var records: [CommandRecord] = []
            while try query.step() {
                let position = query.int64(1)
                guard position <= readable else { continue }
                records.append(
                    .answered(
                        commandId: query.string(0), position: position, answer: query.isNull(2) ? "" : query.string(2)))
            }
            query.reset()
            return records
        }
    }
}
