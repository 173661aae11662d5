import LogbookApplication

/// The person-key store's tables in the event log's PostgreSQL database, named apart from
/// the log's (`PostgresSchema`) and the groups' (`PostgresGroupSchema`): `person_keys` (one
/// row per user the store ever heard of: the wrapped key as `bytea`, or NULL once it was
/// destroyed; the row stays, so the user reads as destroyed forever), `person_keys_forgetting`
/// (the users whose forgetting began), `person_keys_check` (one row, the master key's check
/// value) and `person_keys_schema` (one row, these tables' schema version; version 1 is the
/// first one).
///
/// Opening checks the database without changing anything: it must hold a Logbook event
/// log (the log refuses a database with tables of anything else, so these tables are never
/// made before it), and key tables of a version this build knows. Missing tables are
/// created in one transaction under an advisory lock, checked again under the lock.
enum PostgresPersonKeySchema {
    static let version = 1
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
        INSERT INTO person_keys_schema (version) VALUES (\(version)) ON CONFLICT (only_row) DO NOTHING;
        """

    /// Prepares the database behind `connection`; `target` names it in errors. When this
    /// throws, the caller closes the connection, which ends a transaction left open.
    static func prepare(_ connection: PostgresConnection, target: String) throws {
        let encoding = connection.parameterStatus("server_encoding") ?? "unknown"
        guard encoding == "UTF8" else {
            throw PersonKeyStoreError.notAKeyStore(
                path: target, reason: "its encoding is \(encoding); a key store needs UTF8")
        }
        guard try !isCurrent(connection, target: target) else { return }
        try connection.execute("BEGIN")
        _ = try connection.query("SELECT pg_advisory_xact_lock($1::bigint)", [String(lockKey)])
        if try !isCurrent(connection, target: target) { try connection.execute(create) }
        try connection.execute("COMMIT")
    }

    /// Whether the key tables are there, of this version; throws for a database without a
    /// Logbook event log, another program's, or newer key tables.
    private static func isCurrent(_ connection: PostgresConnection, target: String) throws -> Bool {
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
        guard census.string(0, 2) == "t" else { return false }
        let marker = try connection.query("SELECT version FROM person_keys_schema")
        guard marker.count == 1 else { return false }
        let found = Int(marker.int64(0, 0))
        guard found <= version else { throw PersonKeyStoreError.unsupportedSchema(found: found, supported: version) }
        return found == version
    }
}
