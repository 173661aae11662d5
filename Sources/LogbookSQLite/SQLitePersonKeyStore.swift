import CSQLite
import Glibc
public import LogbookApplication
import Synchronization

/// Each person's wrapped data key in a SQLite file of its own (`<data-dir>/keys.sqlite3`),
/// apart from the event log, so that destroying a key forgets the person. The file is
/// marked with `application_id` "LOGK" and a schema version (`SQLitePersonKeySchema`); a
/// file that is not a database, an event log, a read-model store, a group store and another
/// program's database are refused with `.notAKeyStore`, a newer schema with
/// `.unsupportedSchema`, and nothing is written to them.
///
/// What makes `destroy` leave no copy of the key in the files, checked by the canary test
/// (keys of random bytes written, most destroyed, every file in the folder scanned for
/// them; with `secure_delete` off it does find destroyed keys):
/// - `secure_delete` is on, so SQLite overwrites with zeros the cell space a change frees
///   (the key's bytes when a destroy sets them to NULL) and every page it frees;
/// - the journal is a rollback journal (`journal_mode=DELETE`), not a WAL: the journal holds
///   the pages a transaction changes as they were (with the key) and is deleted when the
///   transaction commits, while a WAL keeps the page images written to it (the key's among
///   them, until a checkpoint also in the database file) until later frames overwrite them.
///   `locking_mode` stays NORMAL: in EXCLUSIVE mode SQLite keeps the journal file after a
///   commit, with its pages in it;
/// - `temp_store` is memory, so statement journals and temporary tables never touch a file;
/// - key rows are only ever appended to the table or shrunk in place (see the schema), so
///   no page split or merge copies a key's cell to another page and leaves the old bytes.
/// `secure_delete` is a setting of each connection: another program that writes the file
/// without it voids this. What no file holds, the disk may: a deleted journal's blocks and
/// overwritten pages stay on the device until the file system reuses them (an SSD remaps
/// writes), which only encrypting the disk or the data folder covers.
///
/// Every change is one transaction, durable when the call returns: `synchronous=EXTRA`,
/// which is `FULL` and also syncs the folder after the journal is deleted, since in this
/// journal mode that deletion is the commit (without it, a power cut could bring the
/// journal back and roll a destroy back). Busy, full or failing storage is `.unavailable`.
/// One connection behind a mutex, used by one thread at a time.
public final class SQLitePersonKeyStore: PersonKeyStore {
    /// The store's file.
    public let path: String
    private let connection: Mutex<SQLiteConnection>

    /// Opens the store at `path`, creating the file and its schema when there is none; a
    /// statement waits `busyTimeoutMilliseconds` for another connection's lock before the
    /// call is `.unavailable`.
    public init(path: String, busyTimeoutMilliseconds: Int = 5_000) throws(PersonKeyStoreError) {
        self.path = path
        let db: SQLiteConnection
        do {
            db = try SQLiteConnection(path: path)
        } catch {
            throw Self.storeError(error, path: path)
        }
        let session = Session(db: db, path: path)
        try session.prepare(busyTimeoutMilliseconds: max(0, busyTimeoutMilliseconds))
        connection = Mutex(db)
    }

    private func withSession<T: Sendable>(_ body: (Session) throws(PersonKeyStoreError) -> T)
        throws(PersonKeyStoreError) -> T
    {
        try connection.withLock { (db: inout SQLiteConnection) throws(PersonKeyStoreError) -> T in
            try body(Session(db: db, path: path))
        }
    }

    // MARK: Copies

    /// Writes a consistent copy of the store to the new file `destination` (`VACUUM INTO`:
    /// one read transaction, so the copy is the store as of one commit, compacted, with no
    /// free page holding a destroyed key), and syncs it. Refuses an existing file.
    public func copy(to destination: String) throws(PersonKeyStoreError) {
        try withSession { session throws(PersonKeyStoreError) in
            let statement = try session.sql { () throws(SQLiteError) in try session.db.statement("VACUUM INTO ?1") }
            try session.sql { () throws(SQLiteError) in
                try statement.bind(1, destination)
                try statement.runBound()
            }
        }
        let descriptor = open(destination, O_RDONLY)
        guard descriptor >= 0 else { throw .unavailable("cannot open the copy \(destination) to sync it") }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw .unavailable("cannot sync the copy \(destination)") }
    }

    // MARK: Keys

    public func keys(for userIds: [String]) throws(PersonKeyStoreError) -> [String: StoredPersonKey] {
        guard !userIds.isEmpty else { return [:] }
        return try withSession { session throws(PersonKeyStoreError) in
            try session.transaction("BEGIN") { () throws(PersonKeyStoreError) in try session.keys(for: userIds) }
        }
    }

    public func create(_ wrapped: [String: [UInt8]]) throws(PersonKeyStoreError) -> [String: StoredPersonKey] {
        guard !wrapped.isEmpty else { return [:] }
        return try withSession { session throws(PersonKeyStoreError) in
            try session.transaction("BEGIN IMMEDIATE") { () throws(PersonKeyStoreError) in
                try session.sql { () throws(SQLiteError) in
                    let insert = try session.db.statement(SQLitePersonKeySchema.SQL.insertKey)
                    for (userId, bytes) in wrapped {
                        try insert.bind(1, userId)
                        try insert.bind(2, bytes: bytes)
                        try insert.runBound()
                    }
                }
                return try session.keys(for: Array(wrapped.keys))
            }
        }
    }

    public func destroy(_ userId: String) throws(PersonKeyStoreError) {
        try withSession { session throws(PersonKeyStoreError) in
            try session.transaction("BEGIN IMMEDIATE") { () throws(PersonKeyStoreError) in
                try session.sql { () throws(SQLiteError) in
                    try session.db.statement(SQLitePersonKeySchema.SQL.destroyKey).run([.text(userId)])
                    if session.db.changes > 0 {
                        try session.db.statement(SQLitePersonKeySchema.SQL.journalDestroy).run([.text(userId)])
                    }
                    try session.db.statement(SQLitePersonKeySchema.SQL.endForgetting).run([.text(userId)])
                }
            }
        }
    }

    public func destroyedSince(_ mark: Int64) throws(PersonKeyStoreError) -> DestroyedKeys {
        try withSession { session throws(PersonKeyStoreError) in
            try session.sql { () throws(SQLiteError) in
                let select = try session.db.statement(SQLitePersonKeySchema.SQL.destroyedSince)
                defer { select.reset() }
                try select.bind(1, mark)
                var destroyed = DestroyedKeys(userIds: [], mark: mark)
                while try select.step() {
                    destroyed.mark = select.int64(0)
                    destroyed.userIds.append(select.string(1))
                }
                return destroyed
            }
        }
    }

    public func latestDestroyMark() throws(PersonKeyStoreError) -> Int64 {
        try withSession { session throws(PersonKeyStoreError) in
            try session.sql { () throws(SQLiteError) in
                try session.db.scalar(SQLitePersonKeySchema.SQL.latestDestroyMark) ?? 0
            }
        }
    }

    // MARK: Forgetting

    public func beginForgetting(_ userId: String) throws(PersonKeyStoreError) {
        try withSession { session throws(PersonKeyStoreError) in
            try session.transaction("BEGIN IMMEDIATE") { () throws(PersonKeyStoreError) in
                try session.sql { () throws(SQLiteError) in
                    try session.db.statement(SQLitePersonKeySchema.SQL.beginForgetting).run([.text(userId)])
                }
            }
        }
    }

    public func forgettingUsers() throws(PersonKeyStoreError) -> [String] {
        try withSession { session throws(PersonKeyStoreError) in
            try session.sql { () throws(SQLiteError) in
                let statement = try session.db.statement(SQLitePersonKeySchema.SQL.forgetting)
                defer { statement.reset() }
                var users: [String] = []
                while try statement.step() { users.append(statement.string(0)) }
                return users
            }
        }
    }

    // MARK: Master-key check

    public func masterKeyCheck() throws(PersonKeyStoreError) -> [UInt8]? {
        try withSession { session throws(PersonKeyStoreError) in try session.check() }
    }

    public func setMasterKeyCheck(_ check: [UInt8]) throws(PersonKeyStoreError) -> [UInt8] {
        try withSession { session throws(PersonKeyStoreError) in
            try session.transaction("BEGIN IMMEDIATE") { () throws(PersonKeyStoreError) in
                try session.sql { () throws(SQLiteError) in
                    let insert = try session.db.statement(SQLitePersonKeySchema.SQL.insertCheck)
                    try insert.bind(1, bytes: check)
                    try insert.runBound()
                }
                guard let stored = try session.check() else {
                    throw PersonKeyStoreError.failed("\(path): the master-key check is missing after it was written")
                }
                return stored
            }
        }
    }

    static func storeError(_ error: SQLiteError, path: String) -> PersonKeyStoreError {
        switch error.code & 0xFF {
        case SQLITE_NOTADB: .notAKeyStore(path: path, reason: "it is not a SQLite database")
        case SQLITE_CORRUPT: .failed("\(path) is damaged: \(error)")
        case _ where error.isTransient: .unavailable("\(path): \(error)")
        default: .failed("\(path): \(error)")
        }
    }
}

/// The store's connection while its lock is held: opening and checking the file, reads,
/// and transactions.
private struct Session {
    let db: SQLiteConnection
    let path: String

    /// What a file holds, as far as opening it is concerned.
    private enum Identity: Equatable {
        case empty
        /// A key store of this schema version or an older one.
        case keyStore(version: Int64)
    }

    /// Checks the file before touching it, sets the connection's journal, deletion and sync
    /// modes, and creates or migrates the schema inside a write transaction that checks
    /// again; a new file's folder is synced, so that the file stays after a crash.
    func prepare(busyTimeoutMilliseconds: Int) throws(PersonKeyStoreError) {
        db.setBusyTimeout(milliseconds: busyTimeoutMilliseconds)
        let found = try identity()
        try useRollbackJournal(attempts: max(1, busyTimeoutMilliseconds / 10))
        let secureDelete = try sql { () throws(SQLiteError) in
            try db.execute("PRAGMA synchronous = EXTRA; PRAGMA temp_store = MEMORY;")
            return try db.scalar("PRAGMA secure_delete = ON")
        }
        guard secureDelete == 1 else {
            throw .failed("\(path): this SQLite does not turn secure_delete on (it answers \(secureDelete ?? -1))")
        }
        guard found != .keyStore(version: SQLitePersonKeySchema.version) else { return }
        try transaction("BEGIN IMMEDIATE") { () throws(PersonKeyStoreError) in
            switch try identity() {
            case .empty:
                try sql { () throws(SQLiteError) in
                    try db.execute(
                        "\(SQLitePersonKeySchema.create) "
                            + "PRAGMA application_id = \(SQLitePersonKeySchema.applicationId); "
                            + "PRAGMA user_version = \(SQLitePersonKeySchema.version);")
                }
            case .keyStore(let version): try migrate(from: version)
            }
        }
        guard case .empty = found else { return }
        if let failure = FileSync.syncDirectory(containing: path) { throw .unavailable(failure) }
    }

    /// Brings a key store of schema `version` to this build's, inside the caller's transaction.
    private func migrate(from version: Int64) throws(PersonKeyStoreError) {
        guard version < SQLitePersonKeySchema.version else { return }
        for step in version..<SQLitePersonKeySchema.version {
            guard let migration = SQLitePersonKeySchema.migrations[step] else {
                throw .failed("\(path): no migration from key-store schema version \(step)")
            }
            try sql { () throws(SQLiteError) in try db.execute(migration) }
        }
        try sql { () throws(SQLiteError) in
            try db.execute("PRAGMA user_version = \(SQLitePersonKeySchema.version)")
        }
    }

    /// Tells an empty database from a key store; throws for anything else, having written
    /// nothing.
    private func identity() throws(PersonKeyStoreError) -> Identity {
        let (tableCount, applicationId, version) = try sql { () throws(SQLiteError) in
            (
                try db.scalar("SELECT count(*) FROM sqlite_schema") ?? 0,
                try db.scalar("PRAGMA application_id") ?? 0, try db.scalar("PRAGMA user_version") ?? 0
            )
        }
        if tableCount == 0 && applicationId == 0 { return .empty }
        switch applicationId {
        case SQLitePersonKeySchema.applicationId: break
        case SQLiteSchema.applicationId: throw .notAKeyStore(path: path, reason: "it is a Logbook event log")
        case SQLiteReadModelSchema.applicationId:
            throw .notAKeyStore(path: path, reason: "it is a Logbook read-model store")
        case SQLiteGroupStoreSchema.applicationId:
            throw .notAKeyStore(path: path, reason: "it is a Logbook group store")
        default:
            throw .notAKeyStore(
                path: path, reason: "it is another program's SQLite database (application_id \(applicationId))")
        }
        guard version <= SQLitePersonKeySchema.version else {
            throw .unsupportedSchema(found: Int(version), supported: Int(SQLitePersonKeySchema.version))
        }
        guard version >= 1 else { throw .notAKeyStore(path: path, reason: "it has no schema version") }
        return .keyStore(version: version)
    }

    /// Sets the rollback journal that is deleted at each commit (a file another program
    /// switched to WAL is switched back, which needs a moment with no other connection in
    /// a transaction: a busy answer is tried again).
    private func useRollbackJournal(attempts: Int) throws(PersonKeyStoreError) {
        for attempt in 1...attempts {
            do {
                let mode = try db.text("PRAGMA journal_mode = DELETE")?.lowercased()
                guard mode == "delete" else {
                    throw PersonKeyStoreError.unavailable(
                        "\(path): the journal stays in mode \(mode ?? "unknown") instead of delete")
                }
                return
            } catch let error as SQLiteError where error.isBusy && attempt < attempts {
                usleep(10_000)
            } catch let error as SQLiteError {
                throw SQLitePersonKeyStore.storeError(error, path: path)
            } catch let error as PersonKeyStoreError {
                throw error
            } catch {
                throw .failed("\(path): \(error)")
            }
        }
    }

    /// What the store holds for each of `userIds` it knows.
    func keys(for userIds: [String]) throws(PersonKeyStoreError) -> [String: StoredPersonKey] {
        try sql { () throws(SQLiteError) in
            let select = try db.statement(SQLitePersonKeySchema.SQL.key)
            defer { select.reset() }
            var found: [String: StoredPersonKey] = [:]
            for userId in userIds where found[userId] == nil {
                select.reset()
                try select.bind(1, userId)
                guard try select.step() else { continue }
                found[userId] = select.isNull(0) ? .destroyed : .wrapped(select.blob(0))
            }
            return found
        }
    }

    func check() throws(PersonKeyStoreError) -> [UInt8]? {
        try sql { () throws(SQLiteError) in
            let select = try db.statement(SQLitePersonKeySchema.SQL.check)
            defer { select.reset() }
            return try select.step() ? select.blob(0) : nil
        }
    }

    /// Runs `body` in one transaction begun with `begin`: committed when it returns, rolled
    /// back when it (or the commit) throws, so that nothing of it is written.
    func transaction<T>(_ begin: String, _ body: () throws(PersonKeyStoreError) -> T) throws(PersonKeyStoreError)
        -> T
    {
        do {
            try sql { () throws(SQLiteError) in try db.statement(begin).run([]) }
            let result = try body()
            try sql { () throws(SQLiteError) in try db.statement("COMMIT").run([]) }
            return result
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
    func sql<T>(_ body: () throws(SQLiteError) -> T) throws(PersonKeyStoreError) -> T {
        do {
            return try body()
        } catch {
            throw SQLitePersonKeyStore.storeError(error, path: path)
        }
    }
}
