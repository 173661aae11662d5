import CSQLite
import Glibc
public import LogbookApplication

/// The consumer groups' definitions and progress in a SQLite file of their own (the groups
/// process keeps it at `<data-dir>/groups.sqlite3`): pages of 16 KiB in a new file, WAL
/// journal and `synchronous=FULL`, so a commit is on disk when `commit` returns (an
/// acknowledgement is confirmed only after that). The file is marked with `application_id`
/// "LOGG" and a schema version (`SQLiteGroupStoreSchema`); a file that is not a database,
/// an event log, a read-model store, another program's database and a newer schema are
/// refused with `.notAGroupStore`, and nothing is written to them.
///
/// A version 1 file (a copy of each pending event) is migrated to version 2 (progress only)
/// when it is opened, inside the transaction that checks it.
///
/// `commit` is one `BEGIN IMMEDIATE` transaction, rolled back on any failure, that applies
/// the changes in the documented order with statements prepared once. A change that points
/// to a bug (a group that is not there, an outcome at or before its group's checkpoint, a
/// checkpoint moved back, a category that is empty or holds a comma) is `.failed`;
/// creating a name that exists is `.groupExists`; busy, full or failing storage is
/// `.unavailable`. One connection, used by one thread at a time.
public final class SQLiteGroupStore: GroupStore {
    public let path: String
    private let db: SQLiteConnection
    /// The page size of a new file, in bytes.
    static let pageSize = 16_384

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
    private enum Identity: Equatable {
        case empty
        /// A group store of this schema version or an older one.
        case groupStore(version: Int64)
    }

    /// Checks the file before touching it, switches it to WAL and creates or migrates the
    /// schema inside a write transaction that checks again.
    private func prepare(busyTimeoutMilliseconds: Int) throws(GroupStoreError) {
        db.setBusyTimeout(milliseconds: busyTimeoutMilliseconds)
        let found = try identity()
        if found == .empty {
            // Before the file's first write: each commit then writes fewer, larger pages.
            try sql { () throws(SQLiteError) in try db.execute("PRAGMA page_size = \(Self.pageSize)") }
        }
        try enableWAL(attempts: busyTimeoutMilliseconds / 10)
        try sql { () throws(SQLiteError) in try db.execute("PRAGMA synchronous = FULL") }
        guard found != .groupStore(version: SQLiteGroupStoreSchema.version) else { return }
        try transaction { () throws(GroupStoreError) in
            switch try self.identity() {
            case .empty:
                try sql { () throws(SQLiteError) in
                    try db.execute(
                        "\(SQLiteGroupStoreSchema.create) "
                            + "PRAGMA application_id = \(SQLiteGroupStoreSchema.applicationId); "
                            + "PRAGMA user_version = \(SQLiteGroupStoreSchema.version);")
                }
            case .groupStore(let version): try migrate(from: version)
            }
        }
    }

    /// Brings a group store of schema `version` to this build's, inside the caller's transaction.
    private func migrate(from version: Int64) throws(GroupStoreError) {
        guard version < SQLiteGroupStoreSchema.version else { return }
        for step in version..<SQLiteGroupStoreSchema.version {
            guard let migration = SQLiteGroupStoreSchema.migrations[step] else {
                throw .failed("\(path): no migration from group-store schema version \(step)")
            }
            try sql { () throws(SQLiteError) in try db.execute(migration) }
        }
        try sql { () throws(SQLiteError) in
            try db.execute("PRAGMA user_version = \(SQLiteGroupStoreSchema.version)")
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
        return .groupStore(version: version)
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
                        createdAt: statement.int64(5), checkpoint: statement.int64(6)))
            }
            return records
        }
    }

    public func outcomes(of group: GroupName, after: Int64, limit: Int) throws(GroupStoreError) -> [EventOutcome] {
        guard limit > 0 else { return [] }
        return try sql { () throws(SQLiteError) in
            let statement = try db.statement(SQLiteGroupStoreSchema.SQL.outcomes)
            defer { statement.reset() }
            try statement.bind(1, group.rawValue)
            try statement.bind(2, after)
            try statement.bind(3, Int64(limit))
            var outcomes: [EventOutcome] = []
            while try statement.step() {
                outcomes.append(
                    EventOutcome(
                        position: statement.int64(0), isDone: statement.int64(1) != 0,
                        attempts: Int(statement.int64(2)), parked: statement.int64(3) != 0,
                        lastFailure: statement.isNull(4) ? nil : statement.string(4)))
            }
            return outcomes
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
            try db.statement(SQLiteGroupStoreSchema.SQL.deleteOutcomes).run([.text(name.rawValue)])
            try db.statement(SQLiteGroupStoreSchema.SQL.deleteGroup).run([.text(name.rawValue)])
            return db.changes
        }
        guard deleted == 1 else { throw Self.noGroup(name) }
    }

    private func create(_ record: GroupRecord) throws(GroupStoreError) {
        guard try checkpoint(of: record.name) == nil else { throw .groupExists(record.name) }
        if let category = record.categories.first(where: { $0.isEmpty || $0.contains(",") }) {
            throw .failed("group \(record.name): the category \"\(category)\" is empty or holds a comma")
        }
        try sql { () throws(SQLiteError) in
            try db.statement(SQLiteGroupStoreSchema.SQL.insertGroup).run([
                .text(record.name.rawValue), .text(record.categories.joined(separator: ",")),
                .int(Int64(record.settings.ackWaitMilliseconds)), .int(Int64(record.settings.maxDeliver)),
                .int(Int64(record.settings.maxInFlight)), .int(record.createdAt), .int(record.checkpoint),
            ])
        }
    }

    /// The group's stored checkpoint; nil when there is no such group.
    private func checkpoint(of name: GroupName) throws(GroupStoreError) -> Int64? {
        try sql { () throws(SQLiteError) in
            try db.scalar(SQLiteGroupStoreSchema.SQL.checkpoint, [.text(name.rawValue)])
        }
    }

    /// One group's changes: its outcomes, then its checkpoint, which forgets the outcomes at
    /// or before it.
    private func apply(_ progress: GroupChanges.Progress, to name: GroupName) throws(GroupStoreError) {
        guard let stored = try checkpoint(of: name) else { throw Self.noGroup(name) }
        if let early = progress.outcomes.keys.min(), early <= stored {
            throw .failed("group \(name): position \(early) is at or before its checkpoint \(stored)")
        }
        if let checkpoint = progress.checkpoint, checkpoint < stored {
            throw .failed("group \(name): the checkpoint cannot move back from \(stored) to \(checkpoint)")
        }
        let group = name.rawValue
        try sql { () throws(SQLiteError) in
            if !progress.outcomes.isEmpty {
                let put = try db.statement(SQLiteGroupStoreSchema.SQL.putOutcome)
                for (position, outcome) in progress.outcomes.sorted(by: { $0.key < $1.key }) {
                    try put.bind(1, group)
                    try put.bind(2, position)
                    try put.bind(3, outcome.isDone ? 1 : 0)
                    try put.bind(4, Int64(outcome.attempts))
                    try put.bind(5, outcome.parked ? 1 : 0)
                    if let failure = outcome.lastFailure { try put.bind(6, failure) } else { try put.bindNull(6) }
                    try put.runBound()
                }
            }
            if let checkpoint = progress.checkpoint, checkpoint > stored {
                try db.statement(SQLiteGroupStoreSchema.SQL.setCheckpoint).run([.text(group), .int(checkpoint)])
                try db.statement(SQLiteGroupStoreSchema.SQL.forgetOutcomes).run([.text(group), .int(checkpoint)])
            }
        }
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
