/// The read-model store's tables, in a file of their own (never the event log's).
/// `application_id` marks the file as a Logbook read-model store and `user_version` is the
/// schema version. Each table keeps the view's fields and, as its `INTEGER PRIMARY KEY`,
/// the position of the event that created the row, which orders every list; the indexes
/// serve the list queries by author, category and buyer. `read_model_meta` holds one row:
/// the checkpoint (written in the same transaction as the rows it covers) and whether a
/// rebuild marked the store complete. Schema version 1 is the first one released.
enum SQLiteReadModelSchema {
    /// "LOGR" in ASCII.
    static let applicationId: Int64 = 0x4C4F_4752
    static let version: Int64 = 1

    static let create = """
        CREATE TABLE read_model_meta (
            id         INTEGER PRIMARY KEY CHECK (id = 1),
            checkpoint INTEGER NOT NULL CHECK (checkpoint >= 0),
            complete   INTEGER NOT NULL CHECK (complete IN (0, 1))
        );
        INSERT INTO read_model_meta (id, checkpoint, complete) VALUES (1, 0, 0);
        CREATE TABLE users (
            position      INTEGER PRIMARY KEY,  -- of the UserRegistered that created the row
            user_id       TEXT    NOT NULL UNIQUE,
            name          TEXT    NOT NULL,
            email         TEXT    NOT NULL,
            gender        TEXT    NOT NULL,
            birthday      TEXT,
            subscription  TEXT    NOT NULL,
            registered_at INTEGER NOT NULL,     -- milliseconds since the epoch, UTC
            updated_at    INTEGER NOT NULL
        );
        CREATE TABLE posts (
            position   INTEGER PRIMARY KEY,
            post_id    TEXT    NOT NULL UNIQUE,
            author_id  TEXT    NOT NULL,
            title      TEXT    NOT NULL,
            content    TEXT    NOT NULL,
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL
        );
        CREATE INDEX posts_by_author ON posts (author_id, position);
        CREATE TABLE products (
            position    INTEGER PRIMARY KEY,
            product_id  TEXT    NOT NULL UNIQUE,
            name        TEXT    NOT NULL,
            name_folded TEXT    NOT NULL,       -- ProductFilter.folded(name), computed in Swift
            price       TEXT    NOT NULL,       -- decimal string, two decimals
            category    TEXT    NOT NULL,
            stock       INTEGER NOT NULL CHECK (stock >= 0),
            updated_at  INTEGER NOT NULL
        );
        CREATE INDEX products_by_category ON products (category, position);
        CREATE TABLE orders (
            position    INTEGER PRIMARY KEY,
            order_id    TEXT    NOT NULL UNIQUE,
            user_id     TEXT    NOT NULL,
            product_id  TEXT    NOT NULL,
            quantity    INTEGER NOT NULL,
            unit_price  TEXT    NOT NULL,
            total_price TEXT    NOT NULL,
            status      TEXT    NOT NULL,
            placed_at   INTEGER NOT NULL
        );
        CREATE INDEX orders_by_user ON orders (user_id, position);
        """
}
