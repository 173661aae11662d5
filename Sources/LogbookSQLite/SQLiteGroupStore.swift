import CSQLite
import Glibc
public import LogbookApplication

/// The consumer groups' definitions and progress in a SQLite file of their own (the groups
/// process keeps it at `<data-dir>/groups.sqlite3`): WAL journal and `synchronous=FULL`,
/// so a commit is on disk when `commit` returns (an acknowledgement is confirmed only
/// after that). The file is marked with `application_id` "LOGG" and a schema version
/// (`SQLiteGroupStoreSchema`); a file that is not a database, an event log, a read-model
/// store, another program's database and a newer schema are refused with
/// `.notAGroupStore`, and nothing is written to them.
///
/// `commit` is one `BEGIN IMMEDIATE` transaction, rolled back on any failure, that applies
/// the changes in the documented order with statements prepared once. A change that points
/// to a bug (a group that is not there, a pending event inserted twice, updated or removed
/// when it is not pending, a category that is empty or holds a comma) is `.failed`;
/// creating a name that exists is `.groupExists`; busy, full or failing storage is
/// `.unavailable`. One connection, used by one thread at a time.
public final class SQLiteGroupStore: GroupStore {
    public let path: String
    private let db: SQLiteConnection

    /// Opens the store at `path`, creating the file and its schema when there is none; a
    /// statement waits `busyTimeoutMilliseconds` for another connection's lock before the
    /// call is `.unavailable`.
    public init(path: String, busyTimeoutMilliseconds: Int = 5_000) throws(GroupStoreError) {
        self.path = path
        do {
            db = try SQLiteConnection(path: path)
        } catch {
            throw Self.storeError(error, path: path)
        }
        try prepare(busyTimeoutMilliseconds: max(0, busyTimeoutMilliseconds))
    }

    // MARK: Opening

    /// What a file holds, as far as opening it is concerned.
    private enum Identity {
        case empty
        case groupStore
    }

    /// Checks the file before touching it, switches it to WAL and creates the schema inside
    /// a write transaction that checks again.
    private func prepare(busyTimeoutMilliseconds: Int) throws(GroupStoreError) {
        db.setBusyTimeout(milliseconds: busyTimeoutMilliseconds)
        let found = try identity()
        try enableWAL(attempts: busyTimeoutMilliseconds / 10)
        try sql { () throws(SQLiteError) in try db.execute("PRAGMA synchronous = FULL") }
        guard case .empty = found else { return }
        try transaction { () throws(GroupStoreError) in
            guard case .empty = try self.identity() else { return }
            try sql { () throws(SQLiteError) in
                try db.execute(
                    "\(SQLiteGroupStoreSchema.create) PRAGMA application_id = \(SQLiteGroupStoreSchema.applicationId); "
                        + "PRAGMA user_version = \(SQLiteGroupStoreSchema.version);")
            }
        }
    }

    /// Tells an empty database from a group store; throws for anything else, having
    /// written nothing.
    private func identity() throws(GroupStoreError) -> Identity {
        let (tableCount, applicationId, version) = try sql { () throws(SQLiteError) in
            (
                try db.scalar("SELECT count(*) FROM sqlite_schema") ?? 0,
                try db.scalar("PRAGMA application_id") ?? 0, try db.scalar("PRAGMA user_version") ?? 0
            )
        }
        if tableCount == 0 && applicationId == 0 { return .empty }
        switch applicationId {
        case SQLiteGroupStoreSchema.applicationId: break
        case SQLiteSchema.applicationId: throw .notAGroupStore("\(path): it is a Logbook event log")
        case SQLiteReadModelSchema.applicationId: throw .notAGroupStore("\(path): it is a Logbook read-model store")
        default:
            throw .notAGroupStore("\(path): it is another program's SQLite database (application_id \(applicationId))")
        }
        guard version <= SQLiteGroupStoreSchema.version else {
            throw .notAGroupStore(
                "\(path): its schema version \(version) is newer than this build's (\(SQLiteGroupStoreSchema.version))")
        }
        guard version >= 1 else { throw .notAGroupStore("\(path): it has no schema version") }
        return .groupStore
    }

    /// Switching to WAL needs a moment with no other connection in a transaction; a busy
    /// answer is tried again.
    private func enableWAL(attempts: Int) throws(GroupStoreError) {
        for attempt in 1...max(1, attempts) {
            do {
                guard try db.text("PRAGMA journal_mode = WAL")?.lowercased() == "wal" else {
                    throw GroupStoreError.unavailable("\(path): the WAL journal cannot be enabled")
                }
                return
            } catch let error as SQLiteError where error.isBusy && attempt < attempts {
                usleep(10_000)
            } catch let error as SQLiteError {
                throw Self.storeError(error, path: path)
            } catch let error as GroupStoreError {
                throw error
            } catch {
                throw .failed("\(path): \(error)")
            }
        }
    }

    // MARK: Reads

    public func groups() throws(GroupStoreError) -> [GroupRecord] {
        try sql { () throws(SQLiteError) in
            let statement = try db.statement(SQLiteGroupStoreSchema.SQL.groups)
            defer { statement.reset() }
            var records: [GroupRecord] = []
            while try statement.step() {
                let settings = GroupSettings(
                    checked: Int(statement.int64(2)), maxDeliver: Int(statement.int64(3)),
                    maxInFlight: Int(statement.int64(4)))
                records.append(
                    GroupRecord(
                        name: GroupName(stored: statement.string(0)),
                        categories: statement.string(1).split(separator: ",").map(String.init), settings: settings,
                        createdAt: statement.int64(5), checkpoint: statement.int64(6), scanned: statement.int64(7)))
            }
            return records
        }
    }

    public func pending(of group: GroupName, stream: String?, after: Int64, limit: Int) throws(GroupStoreError)
        -> [PendingEvent]
    {
        guard limit > 0 else { return [] }
        return try sql { () throws(SQLiteError) in
            let statement = try db.statement(
                stream == nil ? SQLiteGroupStoreSchema.SQL.pending : SQLiteGroupStoreSchema.SQL.pendingOfStream)
            defer { statement.reset() }
            try statement.bind(1, group.rawValue)
            try statement.bind(2, after)
            try statement.bind(3, Int64(limit))
            if let stream { try statement.bind(4, stream) }
            var events: [PendingEvent] = []
            while try statement.step() {
                events.append(
                    PendingEvent(
                        position: statement.int64(0), stream: statement.string(1), attempts: Int(statement.int64(2)),
                        parked: statement.int64(3) != 0, lastFailure: statement.isNull(4) ? nil : statement.string(4),
                        payload: statement.blob(5)))
            }
            return events
        }
    }

    public func parkedCount(of group: GroupName) throws(GroupStoreError) -> Int {
        try sql { () throws(SQLiteError) in
            Int(try db.scalar(SQLiteGroupStoreSchema.SQL.parkedCount, [.text(group.rawValue)]) ?? 0)
        }
    }

    // MARK: Commit

    public func commit(_ changes: GroupChanges) throws(GroupStoreError) {
        guard !changes.isEmpty else { return }
        try transaction { () throws(GroupStoreError) in
            for name in changes.deleted { try delete(name) }
            for record in changes.created { try create(record) }
            for (name, progress) in changes.groups.sorted(by: { $0.key < $1.key }) where !progress.isEmpty {
                try apply(progress, to: name)
            }
        }
    }

    private func delete(_ name: GroupName) throws(GroupStoreError) {
        let deleted = try sql { () throws(SQLiteError) in
            try db.statement(SQLiteGroupStoreSchema.SQL.deletePending).run([.text(name.rawValue)])
            try db.statement(SQLiteGroupStoreSchema.SQL.deleteGroup).run([.text(name.rawValue)])
            return db.changes
        }
        guard deleted == 1 else { throw Self.noGroup(name) }
    }

    private func create(_ record: GroupRecord) throws(GroupStoreError) {
        guard try !exists(record.name) else { throw .groupExists(record.name) }
        if let category = record.categories.first(where: { $0.isEmpty || $0.contains(",") }) {
            throw .failed("group \(record.name): the category \"\(category)\" is empty or holds a comma")
        }
        try sql { () throws(SQLiteError) in
            try db.statement(SQLiteGroupStoreSchema.SQL.insertGroup).run([
                .text(record.name.rawValue), .text(record.categories.joined(separator: ",")),
                .int(Int64(record.settings.ackWaitMilliseconds)), .int(Int64(record.settings.maxDeliver)),
                .int(Int64(record.settings.maxInFlight)), .int(record.createdAt), .int(record.checkpoint),
                .int(record.scanned),
            ])
        }
    }

    private func exists(_ name: GroupName) throws(GroupStoreError) -> Bool {
        try sql { () throws(SQLiteError) in
            try db.scalar(SQLiteGroupStoreSchema.SQL.groupExists, [.text(name.rawValue)]) != nil
        }
    }

    /// One group's changes: inserted, updated, removed, then its checkpoint and scanned.
    private func apply(_ progress: GroupChanges.Progress, to name: GroupName) throws(GroupStoreError) {
        guard try exists(name) else { throw Self.noGroup(name) }
        let group = name.rawValue
        let missing: Int64? = try sql { () throws(SQLiteError) -> Int64? in
            if !progress.inserted.isEmpty {
                let insert = try db.statement(SQLiteGroupStoreSchema.SQL.insertPending)
                for event in progress.inserted {
                    try insert.bind(1, group)
                    try insert.bind(2, event.position)
                    try insert.bind(3, event.stream)
                    try insert.bind(4, Int64(event.attempts))
                    try insert.bind(5, event.parked ? 1 : 0)
                    if let failure = event.lastFailure { try insert.bind(6, failure) } else { try insert.bindNull(6) }
                    try insert.bind(7, bytes: event.payload)
                    try insert.runBound()
                }
            }
            if !progress.updated.isEmpty {
                let update = try db.statement(SQLiteGroupStoreSchema.SQL.updatePending)
                for (position, event) in progress.updated.sorted(by: { $0.key < $1.key }) {
                    try update.bind(1, group)
                    try update.bind(2, position)
                    try update.bind(3, Int64(event.attempts))
                    try update.bind(4, event.parked ? 1 : 0)
                    if let failure = event.lastFailure { try update.bind(5, failure) } else { try update.bindNull(5) }
                    try update.runBound()
                    if db.changes != 1 { return position }
                }
            }
            if !progress.removed.isEmpty {
                let remove = try db.statement(SQLiteGroupStoreSchema.SQL.removePending)
                for position in progress.removed {
                    try remove.bind(1, group)
                    try remove.bind(2, position)
                    try remove.runBound()
                    if db.changes != 1 { return position }
                }
            }
            if progress.checkpoint != nil || progress.scanned != nil {
                try db.statement(SQLiteGroupStoreSchema.SQL.setProgress).run([
                    .text(group), progress.checkpoint.map { .int($0) } ?? .null,
                    progress.scanned.map { .int($0) } ?? .null,
                ])
            }
            return nil
        }
        if let missing { throw .failed("group \(name): position \(missing) is not pending") }
    }

    // MARK: Helpers

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction: committed when it returns, rolled
    /// back when it (or the commit) throws, so that nothing of it is written.
    private func transaction(_ body: () throws(GroupStoreError) -> Void) throws(GroupStoreError) {
        do {
            try sql { () throws(SQLiteError) in try db.statement("BEGIN IMMEDIATE").run([]) }
            try body()
            try sql { () throws(SQLiteError) in try db.statement("COMMIT").run([]) }
        } catch let failure {
            // SQLite may have rolled back already (a full disk, an I/O error).
            guard db.isInTransaction else { throw failure }
            do {
                try db.execute("ROLLBACK")
            } catch {
                throw .unavailable("\(failure), and the transaction could not be rolled back: \(error)")
            }
            throw failure
        }
    }

    /// Runs SQLite calls, turning their errors into the store's.
    private func sql<T>(_ body: () throws(SQLiteError) -> T) throws(GroupStoreError) -> T {
        do {
            return try body()
        } catch {
            throw Self.storeError(error, path: path)
        }
    }

    static func storeError(_ error: SQLiteError, path: String) -> GroupStoreError {
        switch error.code & 0xFF {
        case SQLITE_NOTADB: .notAGroupStore("\(path): it is not a SQLite database")
        case SQLITE_CORRUPT: .failed("\(path) is damaged: \(error)")
        case _ where error.isTransient: .unavailable("\(path): \(error)")
        default: .failed("\(path): \(error)")
        }
    }

    static func noGroup(_ name: GroupName) -> GroupStoreError {
        .failed("there is no group named \(name)")
    }
}
