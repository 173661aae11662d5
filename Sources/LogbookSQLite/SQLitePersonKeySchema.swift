/// The person-key store's tables, in a SQLite file of their own (`keys.sqlite3` in the data
/// folder, never the log's, the read models' or the groups' file). `application_id` marks
/// the file as a Logbook key store and `user_version` is the schema version: version 1 is
/// the first one, version 2 adds the destroy journal (`migrations` brings a version 1 file
/// forward when it is opened, journalling the users it holds as destroyed).
///
/// `person_keys` holds one row per user the store ever heard of: the wrapped key, or NULL
/// once it was destroyed (the row stays, so the user reads as destroyed forever and a later
/// `create` keeps it so). It is a rowid table on purpose, not `WITHOUT ROWID`: a new row
/// gets the next rowid and goes to the end of the table's b-tree, and a destroy only
/// shrinks a row where it is, so the pages that hold key bytes are never rebuilt by a
/// rebalancing, which could copy a cell and leave the copy behind in a page's free space.
/// Rows are never deleted. The `user_id` index holds ids and rowids, never key bytes.
/// `forgetting` holds the users whose forgetting began; `master_key_check` one row, the
/// check value of the master key, written once. `destroyed` is the destroy journal: one row
/// per destroy that destroyed something, its mark (the rowid, max + 1 in the destroy's
/// write transaction: SQLite runs one writer at a time, so marks are gapless and in commit
/// order) and the user id; it holds user ids only, never key bytes, and is a rowid table
/// whose rows are only appended, never deleted, like `person_keys`.
enum SQLitePersonKeySchema {
    /// "LOGK" in ASCII.
    static let applicationId: Int64 = 0x4C4F_474B
    static let version: Int64 = 2

    static let create = """
        CREATE TABLE person_keys (
            user_id TEXT NOT NULL PRIMARY KEY,
            wrapped BLOB CHECK (wrapped IS NULL OR typeof(wrapped) = 'blob')  -- NULL: destroyed
        );
        CREATE TABLE forgetting (
            user_id TEXT NOT NULL PRIMARY KEY
        ) WITHOUT ROWID;
        CREATE TABLE master_key_check (
            only_row INTEGER PRIMARY KEY CHECK (only_row = 1),
            value    BLOB    NOT NULL
        );
        \(createJournal)
        """

    static let createJournal = """
        CREATE TABLE destroyed (
            mark    INTEGER PRIMARY KEY CHECK (mark >= 1),
            user_id TEXT    NOT NULL
        );
        """

    /// The statements that bring a file of schema version `key` to `key + 1`: version 2's
    /// journal starts with every user destroyed so far, marked 1, 2, … in user-id order.
    static let migrations: [Int64: String] = [
        1: """
        \(createJournal)
        INSERT INTO destroyed (mark, user_id)
        SELECT row_number() OVER (ORDER BY user_id), user_id FROM person_keys WHERE wrapped IS NULL;
        """
    ]

    /// The statements the store prepares once and reuses.
    enum SQL {
        static let key = "SELECT wrapped FROM person_keys WHERE user_id = ?1"
        static let insertKey = "INSERT INTO person_keys (user_id, wrapped) VALUES (?1, ?2) ON CONFLICT DO NOTHING"
        /// Sets the key to NULL where it is (the cell shrinks in place), or records a user
        /// never seen as destroyed (a new row at the end).
        static let destroyKey = """
            INSERT INTO person_keys (user_id, wrapped) VALUES (?1, NULL)
            ON CONFLICT (user_id) DO UPDATE SET wrapped = NULL WHERE wrapped IS NOT NULL
            """
        static let beginForgetting = "INSERT INTO forgetting (user_id) VALUES (?1) ON CONFLICT DO NOTHING"
        static let endForgetting = "DELETE FROM forgetting WHERE user_id = ?1"
        /// Journals a destroy under the next mark (run only when `destroyKey` changed a row).
        static let journalDestroy = """
            INSERT INTO destroyed (mark, user_id) SELECT coalesce(max(mark), 0) + 1, ?1 FROM destroyed
            """
        static let destroyedSince = "SELECT mark, user_id FROM destroyed WHERE mark > ?1 ORDER BY mark"
        static let latestDestroyMark = "SELECT coalesce(max(mark), 0) FROM destroyed"
        static let forgetting = "SELECT user_id FROM forgetting ORDER BY user_id"
        static let check = "SELECT value FROM master_key_check WHERE only_row = 1"
        static let insertCheck = "INSERT INTO master_key_check (only_row, value) VALUES (1, ?1) ON CONFLICT DO NOTHING"
    }
}
