import LogbookApplication

/// The group store's tables in the event log's PostgreSQL database, named apart from the
/// log's (`PostgresSchema`): `logbook_groups` (one row per consumer group: definition,
/// categories comma-separated and sorted, and progress), `logbook_group_pending` (each
/// group's pending events by position, the payload as `bytea`) and `logbook_group_schema`
/// (one row, the group tables' schema version; version 1 is the first one).
///
/// Opening checks the database without changing anything: it must hold a Logbook event
/// log (the log refuses a database with tables of anything else, so the group tables are
/// never made before it), and group tables of a version this build knows. Missing tables
/// are created in one transaction under an advisory lock, checked again under the lock.
enum PostgresGroupSchema {
    static let version = 1
    /// The advisory lock key every opener takes while creating the group tables ("LOGG").
    static let lockKey: Int64 = 0x4C4F_4747

    static let create = """
        CREATE TABLE IF NOT EXISTS logbook_group_schema (
            only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
            version  integer NOT NULL CHECK (version >= 1)
        );
        CREATE TABLE IF NOT EXISTS logbook_groups (
            name          text    PRIMARY KEY,
            categories    text    NOT NULL,
            ack_wait_ms   integer NOT NULL,
            max_deliver   integer NOT NULL,
            max_in_flight integer NOT NULL,
            created_at    bigint  NOT NULL,
            checkpoint    bigint  NOT NULL,
            scanned       bigint  NOT NULL
        );
        CREATE TABLE IF NOT EXISTS logbook_group_pending (
            group_name   text    NOT NULL,
            position     bigint  NOT NULL,
            stream       text    NOT NULL,
            attempts     integer NOT NULL,
            parked       boolean NOT NULL,
            last_failure text,
            payload      bytea   NOT NULL,
            PRIMARY KEY (group_name, position)
        );
        CREATE INDEX IF NOT EXISTS logbook_group_pending_by_stream ON logbook_group_pending (group_name, stream, position);
        INSERT INTO logbook_group_schema (version) VALUES (\(version)) ON CONFLICT (only_row) DO NOTHING;
        """

    /// Prepares the database behind `connection`; `target` names it in errors. When this
    /// throws, the caller closes the connection, which ends a transaction left open.
    static func prepare(_ connection: PostgresConnection, target: String) throws {
        let encoding = connection.parameterStatus("server_encoding") ?? "unknown"
        guard encoding == "UTF8" else {
            throw GroupStoreError.notAGroupStore("\(target): its encoding is \(encoding); a group store needs UTF8")
        }
        guard try !isCurrent(connection, target: target) else { return }
        try connection.execute("BEGIN")
        _ = try connection.query("SELECT pg_advisory_xact_lock($1::bigint)", [String(lockKey)])
        if try !isCurrent(connection, target: target) { try connection.execute(create) }
        try connection.execute("COMMIT")
    }

    /// Whether the group tables are there, of this version; throws for a database without
    /// a Logbook event log, another program's, or newer group tables.
    private static func isCurrent(_ connection: PostgresConnection, target: String) throws -> Bool {
        let census = try connection.query(
            """
            SELECT count(*), to_regclass('logbook_schema') IS NOT NULL, to_regclass('logbook_group_schema') IS NOT NULL
            FROM pg_catalog.pg_class AS c JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
            WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
              AND n.nspname <> 'information_schema' AND n.nspname NOT LIKE 'pg\\_%'
            """)
        let relations = census.int64(0, 0)
        if relations == 0 {
            throw GroupStoreError.unavailable(
                "\(target) holds no Logbook event log yet: the group tables go beside one, so start a worker on it first"
            )
        }
        guard census.string(0, 1) == "t" else {
            throw GroupStoreError.notAGroupStore(
                "\(target): it holds \(relations) tables or views of another program and no Logbook event log")
        }
        let log = try connection.query("SELECT application FROM logbook_schema")
        guard log.count == 1, log.string(0, 0) == PostgresSchema.application else {
            throw GroupStoreError.notAGroupStore(
                "\(target): its logbook_schema is not a Logbook event log's (\(log.count == 1 ? log.string(0, 0) : "no row"))"
            )
        }
        guard census.string(0, 2) == "t" else { return false }
        let marker = try connection.query("SELECT version FROM logbook_group_schema")
        guard marker.count == 1 else { return false }
        let found = Int(marker.int64(0, 0))
        guard found <= version else {
            throw GroupStoreError.notAGroupStore(
                "\(target): its group tables are of schema version \(found), newer than this build's (\(version))")
        }
        return found == version
    }
}
