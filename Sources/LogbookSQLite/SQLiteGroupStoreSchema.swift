/// The group store's tables, in a SQLite file of their own (`groups.sqlite3` in the data
/// folder, never the event log's or the read models' file). `application_id` marks the file
/// as a Logbook group store and `user_version` is the schema version: version 1 kept a copy
/// of each pending event, version 2 keeps only progress (`migrations` brings a version 1
/// file forward when it is opened). `groups` holds one row per consumer group: its
/// definition (categories comma-separated and sorted, settings, creation time) and its
/// checkpoint; `outcomes` holds, per group and position after its checkpoint, what is known
/// of an event: done, or its failed deliveries (attempts, parked, the last failure). The
/// events themselves are in the log.
enum SQLiteGroupStoreSchema {
    /// "LOGG" in ASCII.
    static let applicationId: Int64 = 0x4C4F_4747
    static let version: Int64 = 2

    static let create = """
        CREATE TABLE groups (
            name          TEXT    PRIMARY KEY,
            categories    TEXT    NOT NULL,  -- comma-separated, sorted
            ack_wait_ms   INTEGER NOT NULL,
            max_deliver   INTEGER NOT NULL,
            max_in_flight INTEGER NOT NULL,
            created_at    INTEGER NOT NULL,  -- milliseconds since the epoch, UTC
            checkpoint    INTEGER NOT NULL
        ) WITHOUT ROWID;
        \(createOutcomes)
        """

    static let createOutcomes = """
        CREATE TABLE outcomes (
            group_name   TEXT    NOT NULL,
            position     INTEGER NOT NULL,
            done         INTEGER NOT NULL CHECK (done IN (0, 1)),
            attempts     INTEGER NOT NULL,  -- failed deliveries; 0 when done
            parked       INTEGER NOT NULL CHECK (parked IN (0, 1)),
            last_failure TEXT,
            PRIMARY KEY (group_name, position)
        ) WITHOUT ROWID;
        """

    /// The statements that bring a file of schema version `key` to `key + 1`. From 1: a
    /// pending event that was delivered becomes a failed outcome with its attempts (the last
    /// of which may have been in flight), one never delivered is left to the log, and every
    /// position after the checkpoint up to `scanned` that was not pending, so done, becomes
    /// a done outcome (positions of other categories included: they are skipped alike).
    static let migrations: [Int64: String] = [
        1: """
        \(createOutcomes)
        INSERT INTO outcomes (group_name, position, done, attempts, parked, last_failure)
        SELECT group_name, position, 0, attempts, parked, last_failure FROM pending
        WHERE attempts > 0 OR parked = 1 OR last_failure IS NOT NULL;
        WITH RECURSIVE done_positions (group_name, position, last) AS (
            SELECT name, checkpoint + 1, scanned FROM groups WHERE scanned > checkpoint
            UNION ALL
            SELECT group_name, position + 1, last FROM done_positions WHERE position < last
        )
        INSERT INTO outcomes (group_name, position, done, attempts, parked, last_failure)
        SELECT d.group_name, d.position, 1, 0, 0, NULL FROM done_positions AS d
        WHERE NOT EXISTS (SELECT 1 FROM pending AS p WHERE p.group_name = d.group_name AND p.position = d.position);
        DROP TABLE pending;
        ALTER TABLE groups DROP COLUMN scanned;
        """
    ]

    /// The statements the store prepares once and reuses.
    enum SQL {
        static let groups = """
            SELECT name, categories, ack_wait_ms, max_deliver, max_in_flight, created_at, checkpoint
            FROM groups ORDER BY name
            """
        static let outcomes = """
            SELECT position, done, attempts, parked, last_failure FROM outcomes
            WHERE group_name = ?1 AND position > ?2 ORDER BY position LIMIT ?3
            """
        static let checkpoint = "SELECT checkpoint FROM groups WHERE name = ?1"
        static let deleteOutcomes = "DELETE FROM outcomes WHERE group_name = ?1"
        static let deleteGroup = "DELETE FROM groups WHERE name = ?1"
        static let insertGroup = """
            INSERT INTO groups (name, categories, ack_wait_ms, max_deliver, max_in_flight, created_at, checkpoint)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
            """
        static let putOutcome = """
            INSERT OR REPLACE INTO outcomes (group_name, position, done, attempts, parked, last_failure)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6)
            """
        static let setCheckpoint = "UPDATE groups SET checkpoint = ?2 WHERE name = ?1"
        static let forgetOutcomes = "DELETE FROM outcomes WHERE group_name = ?1 AND position <= ?2"
    }
}
