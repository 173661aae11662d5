import LogbookApplication

/// The person-key store's tables in the event log's PostgreSQL database, named apart from
/// the log's (`PostgresSchema`) and the groups' (`PostgresGroupSchema`): `person_keys` (one
/// row per user the store ever heard of: the wrapped key as `bytea`, or NULL once it was
/// destroyed; the row stays, so the user reads as destroyed forever), `person_keys_forgetting`
/// (the users whose forgetting began), `person_keys_check` (one row, the master key's check
/// value), `person_keys_destroyed` (the destroy journal: a mark and a user id per destroy
/// that destroyed something, never a key) and `person_keys_schema` (one row, these tables'
/// schema version: version 1 is the first one, version 2 adds the journal).
///
/// Opening checks the database without changing anything: it must hold a Logbook event
/// log (the log refuses a database with tables of anything else, so these tables are never
/// made before it), and key tables of a version this build knows. Missing tables are
/// created, and version 1 tables migrated (`migrateFrom1`), in one transaction under an
/// advisory lock, checked again under the lock.
///
/// A destroy takes `person_keys_destroyed` in SHARE ROW EXCLUSIVE mode, which conflicts
/// with itself and not with readers, before it changes `person_keys`, and journals under
/// `max(mark) + 1`: destroys run one at a time from that lock to their commit, so marks are
/// gapless and commit in their order, and a reader that sees a mark sees every smaller one
/// (a sequence would not do: a smaller value can commit after a larger one is seen). A
/// process of a version 1 build still running after the migration destroys without
/// journalling: upgrade every process of a log together.
enum PostgresPersonKeySchema {
    static let version = 2
    /// The advisory lock key every opener takes while creating the key tables ("LOGK").
    static let lockKey: Int64 = 0x4C4F_474B

    static let create = """
        CREATE TABLE IF NOT EXISTS person_keys_schema (
            only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
            version  integer NOT NULL CHECK (version >= 1)
        );
        CREATE TABLE IF NOT EXISTS person_keys (
            user_id text PRIMARY KEY,
            wrapped bytea  -- NULL: destroyed
        );
        CREATE TABLE IF NOT EXISTS person_keys_forgetting (
            user_id text PRIMARY KEY
        );
        CREATE TABLE IF NOT EXISTS person_keys_check (
            only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
            value    bytea   NOT NULL
        );
        \(createJournal)
        INSERT INTO person_keys_schema (version) VALUES (\(version)) ON CONFLICT (only_row) DO NOTHING;
        """

    static let createJournal = """
        CREATE TABLE IF NOT EXISTS person_keys_destroyed (
            mark    bigint PRIMARY KEY CHECK (mark >= 1),
            user_id text   NOT NULL
        );
        """

    /// Brings version 1 tables to version 2: the journal starts with every user destroyed so
    /// far, marked 1, 2, … in the order of their ids' bytes, read while `person_keys` is
    /// locked against writers so that no destroy commits between the read and the version.
    static let migrateFrom1 = """
        \(createJournal)
        LOCK TABLE person_keys IN SHARE MODE;
        INSERT INTO person_keys_destroyed (mark, user_id)
        SELECT row_number() OVER (ORDER BY user_id COLLATE "C"), user_id FROM person_keys WHERE wrapped IS NULL;
        UPDATE person_keys_schema SET version = 2;
        """

    /// Prepares the database behind `connection`; `target` names it in errors. When this
    /// throws, the caller closes the connection, which ends a transaction left open.
    static func prepare(_ connection: PostgresConnection, target: String) throws {
        let encoding = connection.parameterStatus("server_encoding") ?? "unknown"
        guard encoding == "UTF8" else {
            throw PersonKeyStoreError.notAKeyStore(
                path: target, reason: "its encoding is \(encoding); a key store needs UTF8")
        }
        guard try installedVersion(connection, target: target) != version else { return }
        try connection.execute("BEGIN")
        _ = try connection.query("SELECT pg_advisory_xact_lock($1::bigint)", [String(lockKey)])
        switch try installedVersion(connection, target: target) {
        case nil: try connection.execute(create)
        case 1?: try connection.execute(migrateFrom1)
        case let found?:
            guard found == version else {
                throw PersonKeyStoreError.failed("\(target): no migration from key-store schema version \(found)")
            }
        }
        try connection.execute("COMMIT")
    }

    /// The version of the key tables, nil when there are none; throws for a database
    /// without a Logbook event log, another program's, or newer key tables.
    private static func installedVersion(_ connection: PostgresConnection, target: String) throws -> Int? {
        let census = try connection.query(
            """
            SELECT count(*), to_regclass('logbook_schema') IS NOT NULL, to_regclass('person_keys_schema') IS NOT NULL
            FROM pg_catalog.pg_class AS c JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
            WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
              AND n.nspname <> 'information_schema' AND n.nspname NOT LIKE 'pg\\_%'
            """)
        let relations = census.int64(0, 0)
        if relations == 0 {
            throw PersonKeyStoreError.unavailable(
                "\(target) holds no Logbook event log yet: the key tables go beside one, so start a worker on it first")
        }
        guard census.string(0, 1) == "t" else {
            throw PersonKeyStoreError.notAKeyStore(
                path: target,
                reason: "it holds \(relations) tables or views of another program and no Logbook event log")
        }
        let log = try connection.query("SELECT application FROM logbook_schema")
        guard log.count == 1, log.string(0, 0) == PostgresSchema.application else {
            throw PersonKeyStoreError.notAKeyStore(
                path: target,
                reason:
                    "its logbook_schema is not a Logbook event log's (\(log.count == 1 ? log.string(0, 0) : "no row"))")
        }
        guard census.string(0, 2) == "t" else { return nil }
        let marker = try connection.query("SELECT version FROM person_keys_schema")
        guard marker.count == 1 else { return nil }
        let found = Int(marker.int64(0, 0))
        guard found <= version else { throw PersonKeyStoreError.unsupportedSchema(found: found, supported: version) }
        return found
    }
}
