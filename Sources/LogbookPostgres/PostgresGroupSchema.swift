import LogbookApplication

/// The group store's tables in the event log's PostgreSQL database, named apart from the
/// log's (`PostgresSchema`): `logbook_groups` (one row per consumer group: definition,
/// categories comma-separated and sorted, and checkpoint), `logbook_group_outcomes` (per
/// group and position after its checkpoint: done, or its failed deliveries) and
/// `logbook_group_schema` (one row, the group tables' schema version: version 1 kept a copy
/// of each pending event in `logbook_group_pending`, version 2 keeps only progress).
///
/// Opening checks the database without changing anything: it must hold a Logbook event
/// log (the log refuses a database with tables of anything else, so the group tables are
/// never made before it), and group tables of a version this build knows. Missing tables
/// are created, and version 1 tables migrated (`migrateFrom1`), in one transaction under an
/// advisory lock, checked again under the lock. A groups process of a version 1 build still
/// running after the migration fails its next commit: upgrade every process of a log together.
enum PostgresGroupSchema {
    static let version = 2
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
            checkpoint    bigint  NOT NULL
        );
        \(createOutcomes)
        INSERT INTO logbook_group_schema (version) VALUES (\(version)) ON CONFLICT (only_row) DO NOTHING;
        """

    static let createOutcomes = """
        CREATE TABLE IF NOT EXISTS logbook_group_outcomes (
            group_name   text    NOT NULL,
            position     bigint  NOT NULL,
            done         boolean NOT NULL,
            attempts     integer NOT NULL,
            parked       boolean NOT NULL,
            last_failure text,
            PRIMARY KEY (group_name, position)
        );
        """

    /// Brings version 1 tables to version 2, as the SQLite store's migration does: a pending
    /// event that was delivered becomes a failed outcome, one never delivered is left to the
    /// log, and every position after the checkpoint up to `scanned` that was not pending (so
    /// done) becomes a done outcome.
    static let migrateFrom1 = """
        \(createOutcomes)
        LOCK TABLE logbook_groups, logbook_group_pending IN SHARE MODE;
        INSERT INTO logbook_group_outcomes (group_name, position, done, attempts, parked, last_failure)
        SELECT group_name, position, false, attempts, parked, last_failure FROM logbook_group_pending
        WHERE attempts > 0 OR parked OR last_failure IS NOT NULL;
        INSERT INTO logbook_group_outcomes (group_name, position, done, attempts, parked, last_failure)
        SELECT g.name, d.position, true, 0, false, NULL
        FROM logbook_groups AS g, generate_series(g.checkpoint + 1, g.scanned) AS d(position)
        WHERE NOT EXISTS (
            SELECT 1 FROM logbook_group_pending AS p WHERE p.group_name = g.name AND p.position = d.position);
        DROP TABLE logbook_group_pending;
        ALTER TABLE logbook_groups DROP COLUMN scanned;
        UPDATE logbook_group_schema SET version = 2;
        """

    /// Prepares the database behind `connection`; `target` names it in errors. When this
    /// throws, the caller closes the connection, which ends a transaction left open.
    static func prepare(_ connection: PostgresConnection, target: String) throws {
        let encoding = connection.parameterStatus("server_encoding") ?? "unknown"
        guard encoding == "UTF8" else {
            throw GroupStoreError.notAGroupStore("\(target): its encoding is \(encoding); a group store needs UTF8")
        }
        guard try installedVersion(connection, target: target) != version else { return }
        try connection.execute("BEGIN")
        _ = try connection.query("SELECT pg_advisory_xact_lock($1::bigint)", [String(lockKey)])
        switch try installedVersion(connection, target: target) {
        case nil: try connection.execute(create)
        case 1?: try connection.execute(migrateFrom1)
        case let found?:
            guard found == version else {
                throw GroupStoreError.failed("\(target): no migration from group schema version \(found)")
            }
        }
        try connection.execute("COMMIT")
    }

    /// The version of the group tables, nil when there are none; throws for a database
    /// without a Logbook event log, another program's, or newer group tables.
    private static func installedVersion(_ connection: PostgresConnection, target: String) throws -> Int? {
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
        guard census.string(0, 2) == "t" else { return nil }
        let marker = try connection.query("SELECT version FROM logbook_group_schema")
        guard marker.count == 1 else { return nil }
        let found = Int(marker.int64(0, 0))
        guard found <= version else {
            throw GroupStoreError.notAGroupStore(
                "\(target): its group tables are of schema version \(found), newer than this build's (\(version))")
        }
        return found
    }
}
