/// The event log's tables. `application_id` marks the file as a Logbook log; `user_version`
/// is the schema version. Triggers make the database itself refuse to change or remove
/// events or command records (`INSERT OR REPLACE` included), refuse an event whose
/// position or version would leave a hole, and refuse a command record that does not end
/// at the current head or does not cover exactly its own events; CHECKs keep an answer
/// valid JSON. `data_version` is the schema version of the event's type that `data` was
/// written under (see `EventEvolution`).
///
/// Schema version 1 was the first one released; version 2 added `data_version`, and
/// `migrations` brings a version 1 file forward when it is opened.
enum SQLiteSchema {
    /// "LOGB" in ASCII.
    static let applicationId: Int64 = 0x4C4F_4742
    static let version: Int64 = 2

    /// The statements that bring a file of schema version `key` to `key + 1`. Every event
    /// of a version 1 file was written before payloads had versions, so it is version 1.
    static let migrations: [Int64: String] = [
        1: "ALTER TABLE events ADD COLUMN data_version INTEGER NOT NULL DEFAULT 1 CHECK (data_version >= 1);"
    ]

    /// The log's head: the last position, 0 for an empty log.
    static let headQuery = "SELECT COALESCE(MAX(position), 0) FROM events"

    static let create = """
        CREATE TABLE events (
            position       INTEGER PRIMARY KEY,
            event_id       TEXT    NOT NULL,
            stream         TEXT    NOT NULL,
            category       TEXT    NOT NULL,
            version        INTEGER NOT NULL CHECK (version >= 1),
            type           TEXT    NOT NULL,
            data           TEXT    NOT NULL,
            command_id     TEXT    NOT NULL,
            correlation_id TEXT    NOT NULL,
            causation_id   TEXT    NOT NULL,
            recorded_at    INTEGER NOT NULL,
            data_version   INTEGER NOT NULL DEFAULT 1 CHECK (data_version >= 1),
            UNIQUE (stream, version)
        );
        CREATE INDEX events_by_category ON events (category, position);
        CREATE TABLE commands (
            command_id     TEXT    PRIMARY KEY,
            first_position INTEGER,           -- NULL when the command appended nothing
            last_position  INTEGER NOT NULL,  -- its last event, or the head when it was answered
            answer         TEXT,              -- what a command that appended nothing was told
            CHECK ((first_position IS NULL) = (answer IS NOT NULL)),
            CHECK (first_position IS NULL OR first_position BETWEEN 1 AND last_position),
            CHECK (answer IS NULL OR json_valid(answer))
        ) WITHOUT ROWID;

        CREATE TRIGGER events_are_contiguous BEFORE INSERT ON events
        WHEN NEW.position IS NOT (SELECT COALESCE(MAX(position), 0) + 1 FROM events)
          OR NEW.version IS NOT (SELECT COALESCE(MAX(version), 0) + 1 FROM events WHERE stream = NEW.stream)
        BEGIN SELECT RAISE(ABORT, 'events must be appended at the next position and the next stream version'); END;
        CREATE TRIGGER events_refuse_update BEFORE UPDATE ON events
        BEGIN SELECT RAISE(ABORT, 'events are append-only: UPDATE is refused'); END;
        CREATE TRIGGER events_refuse_delete BEFORE DELETE ON events
        BEGIN SELECT RAISE(ABORT, 'events are append-only: DELETE is refused'); END;
        CREATE TRIGGER commands_are_new_and_current BEFORE INSERT ON commands
        WHEN EXISTS (SELECT 1 FROM commands WHERE command_id = NEW.command_id)
          OR NEW.last_position IS NOT (SELECT COALESCE(MAX(position), 0) FROM events)
          OR (NEW.first_position IS NOT NULL AND (
                (SELECT command_id FROM events WHERE position = NEW.first_position) IS NOT NEW.command_id
             OR (SELECT command_id FROM events WHERE position = NEW.last_position) IS NOT NEW.command_id
             OR (SELECT command_id FROM events WHERE position = NEW.first_position - 1) IS NEW.command_id))
        BEGIN
            SELECT RAISE(ABORT, 'command records are append-only, end at the head and cover exactly their events');
        END;
        CREATE TRIGGER commands_refuse_update BEFORE UPDATE ON commands
        BEGIN SELECT RAISE(ABORT, 'command records are append-only: UPDATE is refused'); END;
        CREATE TRIGGER commands_refuse_delete BEFORE DELETE ON commands
        BEGIN SELECT RAISE(ABORT, 'command records are append-only: DELETE is refused'); END;
        """
}
