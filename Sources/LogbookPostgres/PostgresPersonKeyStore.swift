public import LogbookApplication

/// Each person's wrapped data key in PostgreSQL, beside the event log in its database:
/// tables `person_keys`, `person_keys_forgetting`, `person_keys_check`, the destroy journal
/// `person_keys_destroyed` and the marker `person_keys_schema` (`PostgresPersonKeySchema`),
/// created if missing and migrated from version 1. The log must be
/// there first: the log refuses a database holding tables of anything else, so the key
/// tables are never created in one without it (`.unavailable` while the database is empty,
/// `.notAKeyStore` for another program's database, `.unsupportedSchema` for newer key tables).
///
/// Every change is one transaction with `synchronous_commit` on, so it is durable when it
/// returns. `create` inserts with `ON CONFLICT DO NOTHING`, in user-id order (so two batches
/// never wait for each other in a cycle), then reads the rows back in a later statement of
/// the same transaction, which sees what a concurrent writer committed first: every worker
/// answers the same key for a user. `destroy` sets the key to NULL (inserting the row for a
/// user never seen), journals it under the next mark when it destroyed something, and ends
/// the forgetting in one transaction, then, after the commit (it cannot run inside a
/// transaction), runs `VACUUM person_keys`. `destroyedSince` reads the journal in one
/// statement, which never waits for a destroy.
///
/// What PostgreSQL keeps after a destroy, and this store cannot erase:
/// - the old row version holding the key (and its TOAST chunks, for a key too long to stay
///   in the row) is a dead tuple until that VACUUM removes it; a transaction older than the
///   destroy that is still open keeps it past this VACUUM (a later one, or autovacuum,
///   removes it);
/// - VACUUM removes the row version, it does not zero the space: the bytes may stay in the
///   free space of the table's pages until new rows overwrite them (`VACUUM FULL` rewrites
///   the table into new files, and the old files' blocks are freed, not erased);
/// - the write-ahead log holds the key as written (the insert, and full-page images of
///   its page) until its segments are recycled, and for as long as they live on in a WAL
///   archive, on a replica or in a base backup taken before the destroy.
/// Only encrypting the storage, and expiring archives and backups, covers those.
///
/// If the VACUUM fails, `destroy` throws although the key is destroyed already (it reads as
/// `.destroyed`); calling it again runs the VACUUM again. Connection trouble is
/// `.unavailable` (a change's outcome is then unknown; the next call reconnects). PostgreSQL
/// text cannot hold NUL, so a user id holding one is refused with `.failed`. One connection
/// behind a mutex, used by one thread at a time.
public final class PostgresPersonKeyStore: PersonKeyStore {
    /// The database, host and port, for messages (never the password).
    public let target: String
    private let connection: PostgresConnectionSlot

    /// Opens the key tables in the database `url` names (a `postgresql://` URI or
    /// `key=value` pairs, as libpq reads them), creating them beside the event log if missing.
    public init(url: String) throws(PersonKeyStoreError) {
        let target = PostgresConnection.target(of: url)
        if let problem = PostgresConnection.malformation(of: url) {
            throw .notAKeyStore(path: target, reason: problem)
        }
        self.target = target
        let connection = try Self.connect(url, target: target)
        do {
            try PostgresPersonKeySchema.prepare(connection, target: target)
        } catch let error as PersonKeyStoreError {
            throw error
        } catch let error as PostgresError {
            throw Self.storeError(error, target: target)
        } catch {
            throw .failed("\(target): \(error)")
        }
        self.connection = PostgresConnectionSlot(connection) { () throws in try Self.connect(url, target: target) }
    }

    /// Whether the database `url` names holds a key store's tables, asked without creating
    /// them: how `logbook migrate` tells a log that seals personal data already.
    public static func exists(url: String) throws(PersonKeyStoreError) -> Bool {
        let target = PostgresConnection.target(of: url)
        if let problem = PostgresConnection.malformation(of: url) { throw .notAKeyStore(path: target, reason: problem) }
        do {
            let connection = try PostgresConnection(connectionString: url)
            return try connection.query("SELECT to_regclass('person_keys_schema') IS NOT NULL").string(0, 0) == "t"
        } catch {
            throw storeError(error, target: target)
        }
    }

    /// A new connection whose commits are flushed before they return (`synchronous_commit`
    /// at least `on`).
    private static func connect(_ connectionString: String, target: String) throws(PersonKeyStoreError)
        -> PostgresConnection
    {
        do {
            let connection = try PostgresConnection(connectionString: connectionString)
            try connection.execute(
                "SET default_transaction_isolation TO 'read committed'; "
                    + "SELECT set_config('synchronous_commit', 'on', false) "
                    + "WHERE current_setting('synchronous_commit') IN ('off', 'local')")
            return connection
        } catch {
            throw storeError(error, target: target)
        }
    }

    static func storeError(_ error: PostgresError, target: String) -> PersonKeyStoreError {
        error.isTransient ? .unavailable("\(target): \(error)") : .failed("\(target): \(error)")
    }

    /// Runs `body` on the connection, connecting first when there is none or the server
    /// dropped it; libpq's errors become `PersonKeyStoreError`s.
    private func withConnection<T: Sendable>(_ body: (PostgresConnection) throws -> T) throws(PersonKeyStoreError)
        -> T
    {
        // Closing a connection left in a transaction ends the transaction.
        let result = connection.withConnection(discarding: { $0 is AbandonedTransaction }, body)
        switch result {
        case .success(let value): return value
        case .failure(let error as PersonKeyStoreError): throw error
        case .failure(let error as AbandonedTransaction): throw .unavailable("\(target): \(error)")
        case .failure(let error as PostgresError): throw Self.storeError(error, target: target)
        case .failure(let error): throw .failed("\(target): \(error)")
        }
    }

    /// A transaction that could not be rolled back: its connection is closed.
    private struct AbandonedTransaction: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs `body` in one transaction on `db`: committed when it returns, rolled back when
    /// it throws; when the rollback fails too, the connection is dropped (`AbandonedTransaction`).
    private static func transaction<T>(_ db: PostgresConnection, _ body: () throws -> T) throws -> T {
        try db.execute("BEGIN")
        do {
            let result = try body()
            try db.execute("COMMIT")
            return result
        } catch {
            guard !db.isBroken else { throw error }
            do {
                try db.execute("ROLLBACK")
            } catch let rollback {
                throw AbandonedTransaction(
                    description: "\(error), and the transaction could not be rolled back: \(rollback)")
            }
            throw error
        }
    }

    /// Refuses a user id PostgreSQL text cannot hold.
    private func refuseNUL(_ userIds: some Sequence<String>) throws(PersonKeyStoreError) {
        if let userId = userIds.first(where: { $0.utf8.contains(0) }) {
            throw .failed("\(target): the user id \(userId.debugDescription) holds NUL, which PostgreSQL text cannot")
        }
    }

    // MARK: Keys

    public func keys(for userIds: [String]) throws(PersonKeyStoreError) -> [String: StoredPersonKey] {
        guard !userIds.isEmpty else { return [:] }
        try refuseNUL(userIds)
        return try withConnection { [target] db in try Self.read(userIds, db, target: target) }
    }

    /// The stored keys of the users `$1`, a text array.
    private static let lookup = PostgresStatement(
        "SELECT user_id, encode(wrapped, 'hex') FROM person_keys WHERE user_id = ANY ($1::text[])")

    /// Stores the keys `$2` (hexadecimal) of the users `$1` that have none yet.
    private static let insertion = PostgresStatement(
        """
        INSERT INTO person_keys (user_id, wrapped)
        SELECT u.id, decode(u.hex, 'hex') FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS u(id, hex, o)
        ORDER BY u.o
        ON CONFLICT (user_id) DO NOTHING
        """)

    /// What the table holds for each of `userIds` it knows.
    private static func read(_ userIds: [String], _ db: PostgresConnection, target: String) throws
        -> [String: StoredPersonKey]
    {
        let rows = try db.query(lookup, [PostgresParameters.textArray(userIds)])
        var found: [String: StoredPersonKey] = [:]
        for row in 0..<rows.count {
            let userId = rows.string(row, 0)
            if rows.isNull(row, 1) {
                found[userId] = .destroyed
            } else if let bytes = PostgresParameters.bytes(fromHex: rows.bytes(row, 1)) {
                found[userId] = .wrapped(bytes)
            } else {
                throw PersonKeyStoreError.failed("\(target): the key of \(userId) is not hexadecimal")
            }
        }
        return found
    }

    public func create(_ wrapped: [String: [UInt8]]) throws(PersonKeyStoreError) -> [String: StoredPersonKey] {
        guard !wrapped.isEmpty else { return [:] }
        try refuseNUL(wrapped.keys)
        let sorted = wrapped.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        let userIds = sorted.map(\.key)
        return try withConnection { [target] db in
            try Self.transaction(db) {
                _ = try db.query(
                    Self.insertion,
                    [PostgresParameters.textArray(userIds), PostgresParameters.hexArray(sorted.map(\.value))])
                return try Self.read(userIds, db, target: target)
            }
        }
    }

    public func destroy(_ userId: String) throws(PersonKeyStoreError) {
        try refuseNUL([userId])
        try withConnection { db in
            try Self.transaction(db) {
                // Destroys run one at a time from here to their commit (see the schema).
                try db.execute("LOCK TABLE person_keys_destroyed IN SHARE ROW EXCLUSIVE MODE")
                _ = try db.query(
                    """
                    WITH destroyed AS (
                        INSERT INTO person_keys (user_id, wrapped) VALUES ($1, NULL)
                        ON CONFLICT (user_id) DO UPDATE SET wrapped = NULL WHERE person_keys.wrapped IS NOT NULL
                        RETURNING user_id
                    )
                    INSERT INTO person_keys_destroyed (mark, user_id)
                    SELECT (SELECT coalesce(max(mark), 0) + 1 FROM person_keys_destroyed), user_id FROM destroyed
                    """, [userId])
                _ = try db.query("DELETE FROM person_keys_forgetting WHERE user_id = $1", [userId])
            }
            try db.execute("VACUUM person_keys")
        }
    }

    public func destroyedSince(_ mark: Int64) throws(PersonKeyStoreError) -> DestroyedKeys {
        try withConnection { db in
            let rows = try db.query(
                "SELECT mark, user_id FROM person_keys_destroyed WHERE mark > $1::bigint ORDER BY mark", [String(mark)])
            var destroyed = DestroyedKeys(userIds: [], mark: mark)
            destroyed.userIds.reserveCapacity(rows.count)
            for row in 0..<rows.count {
                destroyed.mark = rows.int64(row, 0)
                destroyed.userIds.append(rows.string(row, 1))
            }
            return destroyed
        }
    }

    public func latestDestroyMark() throws(PersonKeyStoreError) -> Int64 {
        try withConnection { db in
            try db.query("SELECT coalesce(max(mark), 0) FROM person_keys_destroyed").int64(0, 0)
        }
    }

    // MARK: Forgetting

    public func beginForgetting(_ userId: String) throws(PersonKeyStoreError) {
        try refuseNUL([userId])
        try withConnection { db in
            _ = try db.query(
                "INSERT INTO person_keys_forgetting (user_id) VALUES ($1) ON CONFLICT (user_id) DO NOTHING", [userId])
        }
    }

    public func forgettingUsers() throws(PersonKeyStoreError) -> [String] {
        try withConnection { db in
            let rows = try db.query("SELECT user_id FROM person_keys_forgetting ORDER BY user_id COLLATE \"C\"")
            return (0..<rows.count).map { rows.string($0, 0) }
        }
    }

    // MARK: Master-key check

    public func masterKeyCheck() throws(PersonKeyStoreError) -> [UInt8]? {
        try withConnection { [target] db in try Self.readCheck(db, target: target) }
    }

    public func setMasterKeyCheck(_ check: [UInt8]) throws(PersonKeyStoreError) -> [UInt8] {
        try withConnection { [target] db in
            try Self.transaction(db) {
                _ = try db.query(
                    """
                    INSERT INTO person_keys_check (value) VALUES (decode(($1::text[])[1], 'hex'))
                    ON CONFLICT (only_row) DO NOTHING
                    """, [PostgresParameters.hexArray([check])])
                guard let stored = try Self.readCheck(db, target: target) else {
                    throw PersonKeyStoreError.failed("\(target): the master-key check is missing after it was written")
                }
                return stored
            }
        }
    }

    private static func readCheck(_ db: PostgresConnection, target: String) throws -> [UInt8]? {
        let rows = try db.query("SELECT encode(value, 'hex') FROM person_keys_check")
        guard rows.count > 0 else { return nil }
        guard let bytes = PostgresParameters.bytes(fromHex: rows.bytes(0, 0)) else {
            throw PersonKeyStoreError.failed("\(target): the master-key check is not hexadecimal")
        }
        return bytes
    }
}
