/// The group store's tables, in a SQLite file of their own (`groups.sqlite3` in the data
/// folder, never the event log's or the read models' file). `application_id` marks the file
/// as a Logbook group store and `user_version` is the schema version; version 1 is the
/// first one. `groups` holds one row per consumer group: its definition (categories
/// comma-separated and sorted, settings, creation time) and its progress; `pending` holds
/// each group's pending events by position, with the payload a member receives as a blob.
/// The index serves the reads of one stream's pending events in position order.
enum SQLiteGroupStoreSchema {
    /// "LOGG" in ASCII.
    static let applicationId: Int64 = 0x4C4F_4747
    static let version: Int64 = 1

    static let create = """
        CREATE TABLE groups (
            name          TEXT    PRIMARY KEY,
            categories    TEXT    NOT NULL,  -- comma-separated, sorted
            ack_wait_ms   INTEGER NOT NULL,
            max_deliver   INTEGER NOT NULL,
            max_in_flight INTEGER NOT NULL,
            created_at    INTEGER NOT NULL,  -- milliseconds since the epoch, UTC
            checkpoint    INTEGER NOT NULL,
            scanned       INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE pending (
            group_name   TEXT    NOT NULL,
            position     INTEGER NOT NULL,
            stream       TEXT    NOT NULL,
            attempts     INTEGER NOT NULL,
            parked       INTEGER NOT NULL CHECK (parked IN (0, 1)),
            last_failure TEXT,
            payload      BLOB    NOT NULL,
            PRIMARY KEY (group_name, position)
        ) WITHOUT ROWID;
        CREATE INDEX pending_by_stream ON pending (group_name, stream, position);
        """

    /// The statements the store prepares once and reuses.
    enum SQL {
        static let groups = """
            SELECT name, categories, ack_wait_ms, max_deliver, max_in_flight, created_at, checkpoint, scanned
            FROM groups ORDER BY name
            """
        static let pending = """
            SELECT position, stream, attempts, parked, last_failure, payload FROM pending
            WHERE group_name = ?1 AND position > ?2 ORDER BY position LIMIT ?3
            """
        /// Through the stream's index: without statistics the planner may walk the primary
        /// key in position order instead, reading every pending event after `position`.
        static let pendingOfStream = """
            SELECT position, stream, attempts, parked, last_failure, payload FROM pending INDEXED BY pending_by_stream
            WHERE group_name = ?1 AND stream = ?4 AND position > ?2 ORDER BY position LIMIT ?3
            """
        static let parkedCount = "SELECT count(*) FROM pending WHERE group_name = ?1 AND parked = 1"
        static let groupExists = "SELECT 1 FROM groups WHERE name = ?1"
        static let deletePending = "DELETE FROM pending WHERE group_name = ?1"
        static let deleteGroup = "DELETE FROM groups WHERE name = ?1"
        static let insertGroup = """
            INSERT INTO groups (name, categories, ack_wait_ms, max_deliver, max_in_flight, created_at, checkpoint,
                                scanned)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
            """
        static let insertPending = """
            INSERT INTO pending (group_name, position, stream, attempts, parked, last_failure, payload)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
            """
        static let updatePending = """
            UPDATE pending SET attempts = ?3, parked = ?4, last_failure = ?5 WHERE group_name = ?1 AND position = ?2
            """
        static let removePending = "DELETE FROM pending WHERE group_name = ?1 AND position = ?2"
        static let setProgress = """
            UPDATE groups SET checkpoint = coalesce(?2, checkpoint), scanned = coalesce(?3, scanned) WHERE name = ?1
            """
    }
}
