/// The event log's objects in a PostgreSQL database, and the function that appends a batch.
///
/// - `events`: one row per event, `position` 1, 2, 3 … and `UNIQUE (stream, version)`;
///   `data` is text, stored byte for byte as given (never `jsonb`), with the `data_version`
///   of its type it was written under (see `EventEvolution`).
/// - `commands`: one row per recorded command id: the range of its events, or the answer a
///   command that appended nothing got and the head at that moment.
/// - `log_head`: one row, the last assigned position. Every append that adds events bumps
///   it after deciding everything else and holds its row lock until COMMIT, so positions are
///   assigned in commit order and a rolled-back append takes its bump back with it.
/// - `streams`: one row per stream, its version; the row is the lock an append takes (in
///   sorted order) on every stream it reads or writes.
/// - `command_claims` (unlogged): a row per command id of an append in flight, inserted
///   first and deleted in the same transaction, so that a second writer of the same id waits
///   for the first to finish and then finds its record.
/// - `logbook_schema`: one row naming the application and the schema version.
///
/// Statement triggers make the database refuse UPDATE, DELETE and TRUNCATE of events and
/// command records (message "… are append-only …"), removing the head or a stream's row,
/// and moving either backwards. Further statement triggers (`holeChecks`) refuse, from any
/// writer, an insert that would leave a hole: see there.
///
/// Schema version 1 was the first one released; version 2 added `holeChecks`; version 3
/// decides a batch with set statements (`append`), with the same signature and outcomes,
/// so a process of version 2 still running beside it appends as before. `migrations`
/// brings a version 1 or 2 database forward when it is opened.
enum PostgresSchema {
    /// What `logbook_schema.application` says in a Logbook log.
    static let application = "logbook event log"
    static let version = 3

    /// The statements that bring a database of schema version `key` to `key + 1`, run in
    /// the opening transaction under the advisory lock. Version 1 lacked the hole checks;
    /// its tables and append function are those of version 2. Version 2's append function
    /// decided every request in a loop; version 3's replaces it.
    static let migrations: [Int: String] = [1: holeChecks, 2: append]

    /// Everything a new log needs, in one transaction.
    static let create =
        tables + triggers + holeChecks + append
        + "INSERT INTO logbook_schema (application, version) VALUES ('\(application)', \(version));\n"

    static let tables = """
        CREATE TABLE logbook_schema (
            only_row    boolean PRIMARY KEY DEFAULT true CHECK (only_row),
            application text    NOT NULL,
            version     integer NOT NULL CHECK (version >= 1)
        );
        CREATE TABLE events (
            position       bigint  PRIMARY KEY CHECK (position >= 1),
            event_id       text    NOT NULL,
            stream         text    NOT NULL,
            category       text    NOT NULL,
            version        integer NOT NULL CHECK (version >= 1),
            type           text    NOT NULL,
            data           text    NOT NULL,
            command_id     text    NOT NULL,
            correlation_id text    NOT NULL,
            causation_id   text    NOT NULL,
            recorded_at    bigint  NOT NULL,
            data_version   integer NOT NULL CHECK (data_version >= 1),
            UNIQUE (stream, version)
        );
        CREATE INDEX events_by_category ON events (category, position);
        CREATE TABLE commands (
            command_id     text   PRIMARY KEY,
            first_position bigint,
            last_position  bigint NOT NULL CHECK (last_position >= 0),
            answer         text,
            CHECK ((first_position IS NULL) = (answer IS NOT NULL)),
            CHECK (first_position IS NULL OR first_position BETWEEN 1 AND last_position),
            CHECK (answer IS NULL OR answer::json IS NOT NULL)
        );
        CREATE TABLE log_head (
            only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
            position bigint  NOT NULL CHECK (position >= 0)
        );
        INSERT INTO log_head (position) VALUES (0);
        CREATE TABLE streams (
            stream  text    PRIMARY KEY,
            version integer NOT NULL CHECK (version >= 0)
        );
        CREATE UNLOGGED TABLE command_claims (command_id text PRIMARY KEY);
        """

    static let triggers = """
        CREATE FUNCTION logbook_refuse() RETURNS trigger LANGUAGE plpgsql AS $refuse$
        BEGIN
            RAISE EXCEPTION '%', TG_ARGV[0] USING ERRCODE = 'integrity_constraint_violation';
        END
        $refuse$;
        CREATE TRIGGER events_are_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON events
            FOR EACH STATEMENT EXECUTE FUNCTION logbook_refuse('events are append-only: UPDATE, DELETE and TRUNCATE are refused');
        CREATE TRIGGER commands_are_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON commands
            FOR EACH STATEMENT EXECUTE FUNCTION logbook_refuse('command records are append-only: UPDATE, DELETE and TRUNCATE are refused');
        CREATE TRIGGER log_head_stays BEFORE DELETE OR TRUNCATE ON log_head
            FOR EACH STATEMENT EXECUTE FUNCTION logbook_refuse('the log head cannot be removed');
        CREATE TRIGGER log_head_moves_forward BEFORE UPDATE ON log_head
            FOR EACH ROW WHEN (NEW.position < OLD.position)
            EXECUTE FUNCTION logbook_refuse('the log head only moves forward');
        CREATE TRIGGER streams_stay BEFORE DELETE OR TRUNCATE ON streams
            FOR EACH STATEMENT EXECUTE FUNCTION logbook_refuse('stream versions cannot be removed');
        CREATE TRIGGER streams_move_forward BEFORE UPDATE ON streams
            FOR EACH ROW WHEN (NEW.version < OLD.version OR NEW.stream <> OLD.stream)
            EXECUTE FUNCTION logbook_refuse('stream versions only move forward');
        """

    /// What the database checks of every insert, whoever writes it (the append function, a
    /// raw session, a future build), once per statement: AFTER INSERT … FOR EACH STATEMENT
    /// triggers read the statement's new rows from a transition table, so a batch of
    /// thousands of rows pays one check of a few index lookups per stream, not one per row.
    ///
    /// - `events_have_no_holes`: the new positions are exactly P + 1 … P + n, where P is the
    ///   last position below them, and the head row says P + n; in each stream, the new
    ///   versions, in position order, are V + 1, V + 2 … where V is the stream's last version
    ///   below them, and its `streams` row says the last one. (What lies below was checked
    ///   the same way when it was inserted, and the unique keys keep new rows off old ones.)
    /// - `commands_cover_their_events`: an appended command's range is exactly the events
    ///   carrying its id from the event before it to the head, and it lies in what this
    ///   transaction appended (after the head the transaction found) or ends at the head;
    ///   an answer points at the head, or at a position between the head the transaction
    ///   found and the head (where a batch answered it). Which positions this transaction
    ///   appended is kept in the transaction-local setting `logbook.appended_after`, written
    ///   by the events check when the transaction's first events arrive (a savepoint rolled
    ///   back takes it back with its events); a session that sets it itself can only loosen
    ///   the check on where a record lies, never on what it covers.
    /// - `log_head_is_the_last_position` (deferred to COMMIT, one row): the head row equals
    ///   the last event's position, so the head cannot be moved without events.
    ///
    /// Together with the unique keys (`position`, `(stream, version)`, `command_id`) these
    /// refuse what the SQLite log's row triggers refuse.
    static let holeChecks = """
        CREATE FUNCTION logbook_check_events() RETURNS trigger LANGUAGE plpgsql AS $check$
        DECLARE
            v_count  bigint;
            v_low    bigint;
            v_high   bigint;
            v_below  bigint;
            v_head   bigint;
            v_stream text;
        BEGIN
            SELECT count(*), min(n.position), max(n.position) INTO v_count, v_low, v_high FROM new_events AS n;
            IF v_count = 0 THEN
                RETURN NULL;
            END IF;
            SELECT coalesce(max(e.position), 0) INTO v_below FROM events AS e WHERE e.position < v_low;
            SELECT h.position INTO v_head FROM log_head AS h;
            IF v_low <> v_below + 1 OR v_high - v_low + 1 <> v_count OR v_head IS DISTINCT FROM v_high THEN
                RAISE EXCEPTION 'events must be appended at the next positions without holes, with the head moved to the last: % new at %…% after position %, head %',
                    v_count, v_low, v_high, v_below, v_head
                    USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            IF nullif(current_setting('logbook.appended_after', true), '') IS NULL THEN
                PERFORM set_config('logbook.appended_after', v_below::text, true);
            END IF;
            -- Per stream of the statement: its versions in position order minus their rank are one
            -- number, V, the stream's last version below them; its row says the last new one. Both
            -- lookups are subqueries, one index probe each per stream, whatever the planner
            -- guesses of the new rows (a join could scan every stream of the log).
            SELECT s.stream INTO v_stream
            FROM (
                SELECT r.stream, min(r.version) AS low, max(r.version) AS high,
                       min(r.version - r.o) AS least_offset, max(r.version - r.o) AS most_offset
                FROM (SELECT n.stream, n.version, row_number() OVER (PARTITION BY n.stream ORDER BY n.position) AS o
                      FROM new_events AS n) AS r
                GROUP BY r.stream
            ) AS s
            WHERE s.least_offset <> s.most_offset
               OR s.low <> 1 + coalesce((SELECT max(e.version) FROM events AS e
                                         WHERE e.stream = s.stream AND e.version < s.low), 0)
               OR (SELECT st.version FROM streams AS st WHERE st.stream = s.stream) IS DISTINCT FROM s.high
            LIMIT 1;
            IF FOUND THEN
                RAISE EXCEPTION 'events must be appended at the next versions of their stream without holes, with the stream''s row moved to the last: stream %',
                    v_stream
                    USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            RETURN NULL;
        END
        $check$;
        CREATE TRIGGER events_have_no_holes AFTER INSERT ON events
            REFERENCING NEW TABLE AS new_events
            FOR EACH STATEMENT EXECUTE FUNCTION logbook_check_events();

        CREATE FUNCTION logbook_check_commands() RETURNS trigger LANGUAGE plpgsql AS $check$
        DECLARE
            v_head  bigint;
            v_after bigint;
            v_id    text;
        BEGIN
            IF NOT EXISTS (SELECT FROM new_commands) THEN
                RETURN NULL;
            END IF;
            SELECT coalesce(max(e.position), 0) INTO v_head FROM events AS e;
            v_after := coalesce(nullif(current_setting('logbook.appended_after', true), '')::bigint, v_head);
            SELECT c.command_id INTO v_id FROM new_commands AS c
            WHERE c.last_position NOT BETWEEN v_after AND v_head
               OR (c.first_position <= v_after AND c.last_position <> v_head)
            LIMIT 1;
            IF NOT FOUND THEN
                -- From the event before the first record's range (normally the head the transaction
                -- found) to the head, each record's id must be carried by exactly its range.
                SELECT least(v_after, min(c.first_position) - 1) INTO v_after FROM new_commands AS c;
                -- One aggregate over the new appended records and those events, rather than a join:
                -- the planner knows nothing of rows this transaction inserted, and a join it
                -- misjudges costs n x m comparisons.
                SELECT x.command_id INTO v_id
                FROM (
                    SELECT c.command_id, c.first_position AS f, c.last_position AS l, NULL::bigint AS p
                    FROM new_commands AS c WHERE c.first_position IS NOT NULL
                    UNION ALL
                    SELECT e.command_id, NULL, NULL, e.position FROM events AS e
                    WHERE e.position BETWEEN v_after AND v_head
                ) AS x
                GROUP BY x.command_id
                HAVING count(x.f) > 0
                   AND (min(x.p) IS DISTINCT FROM min(x.f) OR max(x.p) IS DISTINCT FROM max(x.l)
                        OR count(x.p) <> max(x.l) - min(x.f) + 1)
                LIMIT 1;
            END IF;
            IF FOUND THEN
                RAISE EXCEPTION 'a command record must cover exactly its own events, appended in its transaction, or point at the head: command %',
                    v_id
                    USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            RETURN NULL;
        END
        $check$;
        CREATE TRIGGER commands_cover_their_events AFTER INSERT ON commands
            REFERENCING NEW TABLE AS new_commands
            FOR EACH STATEMENT EXECUTE FUNCTION logbook_check_commands();

        CREATE FUNCTION logbook_check_head() RETURNS trigger LANGUAGE plpgsql AS $check$
        DECLARE
            v_head bigint;
            v_last bigint;
        BEGIN
            SELECT h.position INTO v_head FROM log_head AS h;
            SELECT coalesce(max(e.position), 0) INTO v_last FROM events AS e;
            IF v_head IS DISTINCT FROM v_last THEN
                RAISE EXCEPTION 'the log head must be the last event''s position: head %, last event %', v_head, v_last
                    USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            RETURN NULL;
        END
        $check$;
        CREATE CONSTRAINT TRIGGER log_head_is_the_last_position AFTER UPDATE ON log_head
            DEFERRABLE INITIALLY DEFERRED
            FOR EACH ROW EXECUTE FUNCTION logbook_check_head();

        """

    /// `logbook_append(batch jsonb)`: the whole append of a batch in one statement (one
    /// round trip; outside an explicit transaction it is its own transaction, committed
    /// before the call returns). `batch` is an array with one element per request:
    /// `[commandId, correlationId, causationId, answer or null, [[stream, expected]…],
    /// [dependency…], [[eventId, stream, category, type, data, recordedAt, dataVersion]…]]`,
    /// expectations and dependencies in the order they are to be checked, `expected` -1 for
    /// any, 0 for no stream, n for exactly n. One row per request comes back, in order:
    /// `committed` (at_position: the first event's position, or the head for an answer;
    /// versions: each event's stream version), `duplicate`, `conflict` (detail: the stream,
    /// actual: its version) or `abandoned` (detail: the dependency).
    ///
    /// A batch in which every request that is not a duplicate commits (the usual case: its
    /// worker decided it against the same versions) is checked and written by a handful of
    /// set statements, whatever its size; any other is decided request by request. Either
    /// way each request gets the outcome `AppendRequest.refusal` gives it, in order.
    ///
    /// Lock order, the same in every append so that two never wait for each other: the
    /// command ids' claims (sorted), then the stream rows (sorted, created at version 0 when
    /// missing), then, last, the head row.
    static let append = """
        CREATE OR REPLACE FUNCTION logbook_append(batch jsonb)
        RETURNS TABLE (ordinal integer, outcome text, at_position bigint, detail text, actual integer, versions integer[])
        LANGUAGE plpgsql AS $append$
        #variable_conflict use_column
        DECLARE
            v_ids             text[];
            v_claims          tid[];
            v_recorded        text[];
            v_committed       text[] := '{}';
            v_streams         text[];
            v_versions        integer[];
            v_request         jsonb;
            v_item            jsonb;
            v_id              text;
            v_missing         text;
            v_slot            integer;
            v_expected        integer;
            v_refused         boolean;
            v_base            bigint;
            v_first           integer;
            v_all_commit        boolean;
            n_requests        integer := 0;
            n_events          integer := 0;
            n_commands        integer := 0;
            e_event_id        text[] := '{}';
            e_stream          text[] := '{}';
            e_category        text[] := '{}';
            e_version         integer[] := '{}';
            e_type            text[] := '{}';
            e_data            text[] := '{}';
            e_command         text[] := '{}';
            e_correlation     text[] := '{}';
            e_causation       text[] := '{}';
            e_recorded_at     bigint[] := '{}';
            e_data_version    integer[] := '{}';
            c_id              text[] := '{}';
            c_first           integer[] := '{}';
            c_last            integer[] := '{}';
            c_answer          text[] := '{}';
            r_outcome         text[] := '{}';
            r_first           integer[] := '{}';
            r_last            integer[] := '{}';
            r_detail          text[] := '{}';
            r_actual          integer[] := '{}';
        BEGIN
            -- 1. Claim every command id, in sorted order. A writer in flight with the same id holds
            --    an uncommitted claim, so this insert waits until that writer commits or rolls back;
            --    claims are deleted below in the same transaction, so afterwards the id is free and
            --    the lookup that follows (a new statement, a new snapshot) sees the first writer's record.
            SELECT coalesce(array_agg(id ORDER BY id COLLATE "C"), '{}') INTO v_ids
            FROM (SELECT DISTINCT r->>0 AS id FROM jsonb_array_elements(batch) AS r) AS ids;
            WITH claimed AS (
                INSERT INTO command_claims (command_id) SELECT id FROM unnest(v_ids) AS id RETURNING ctid
            )
            SELECT coalesce(array_agg(claimed.ctid), '{}') INTO v_claims FROM claimed;
            -- Every lookup by key in this function is a subquery per key: one index probe each,
            -- whatever the planner guesses of a table it has no statistics of yet (a join or an
            -- `= ANY` over a batch-sized array becomes a scan of the whole table when it guesses low).
            SELECT coalesce(array_agg(u.id), '{}') INTO v_recorded
            FROM unnest(v_ids) AS u(id)
            WHERE (SELECT true FROM commands AS c WHERE c.command_id = u.id);

            -- 2. Lock the row of every stream the batch reads or writes, in sorted order, creating
            --    missing ones at version 0 (ON CONFLICT DO UPDATE ... WHERE false locks an existing row
            --    without writing it). Then read their versions, which no one else can change now.
            SELECT coalesce(array_agg(s ORDER BY s COLLATE "C"), '{}') INTO v_streams
            FROM (
                SELECT x->>0 AS s FROM jsonb_array_elements(batch) AS r, jsonb_array_elements(r->4) AS x
                WHERE NOT (r->>0 = ANY (v_recorded))
                UNION
                SELECT x->>1 FROM jsonb_array_elements(batch) AS r, jsonb_array_elements(r->6) AS x
                WHERE NOT (r->>0 = ANY (v_recorded))
            ) AS named;
            INSERT INTO streams AS st (stream, version) SELECT s, 0 FROM unnest(v_streams) AS s
            ON CONFLICT (stream) DO UPDATE SET version = st.version WHERE false;
            SELECT coalesce(array_agg((SELECT st.version FROM streams AS st WHERE st.stream = u.s) ORDER BY u.o), '{}')
            INTO v_versions
            FROM unnest(v_streams) WITH ORDINALITY AS u(s, o);

            -- 3. Decide the batch. Normally every request that is not a duplicate commits: its
            --    dependencies committed earlier in the batch, and its expectations hold against
            --    the stream versions plus the events of the requests before it. That is checked
            --    with set statements (one sort per statement, no search per row); when it holds,
            --    the outcome is the one the loop below gives, written by set statements too. A
            --    session that sets logbook.decide_one_by_one to 'on' always takes the loop (the
            --    tests compare the two); logbook.decided says, until the transaction ends, which
            --    way the last batch was decided ('together' or 'one by one').
            WITH requests AS (
                SELECT b.o::integer AS o, b.r->>0 AS id, b.r
                FROM jsonb_array_elements(batch) WITH ORDINALITY AS b(r, o)
            ), live AS (
                SELECT q.* FROM requests AS q WHERE NOT (q.id = ANY (v_recorded))
            ), runs AS (
                -- Per stream, in request order: its version (kind 0), then each expectation (kind
                -- 1) after the events of the requests before it (kind 2), so that a running sum
                -- gives the version an expectation is checked against. No join: the planner knows
                -- nothing of these rows, and a join it misjudges costs n x m comparisons.
                SELECT u.s AS stream, 0 AS o, 0 AS kind, NULL::integer AS expected, u.v::bigint AS n
                FROM unnest(v_streams, v_versions) AS u(s, v)
                UNION ALL
                -- An expected version that is not a plain integer is NULL here and sends the batch
                -- to the loop, which reports it only if it reaches it.
                SELECT x.x->>0, l.o, 1,
                       CASE WHEN jsonb_typeof(x.x->1) = 'number' AND x.x->>1 ~ '^-?[0-9]{1,9}$'
                            THEN (x.x->>1)::integer END,
                       0
                FROM live AS l, jsonb_array_elements(l.r->4) AS x(x)
                UNION ALL
                SELECT x.x->>1, l.o, 2, NULL, count(*)
                FROM live AS l, jsonb_array_elements(l.r->6) AS x(x)
                GROUP BY x.x->>1, l.o
            ), dependencies AS (
                SELECT l.o, d.id FROM live AS l, jsonb_array_elements_text(l.r->5) AS d(id)
            )
            SELECT coalesce(current_setting('logbook.decide_one_by_one', true), '') <> 'on'
               AND (SELECT count(*) = count(DISTINCT q.id) FROM requests AS q)
               AND NOT EXISTS (
                   SELECT FROM live AS q
                   WHERE jsonb_typeof(q.r->6) IS DISTINCT FROM 'array'
                      OR (jsonb_array_length(q.r->6) > 0) = (q.r->>3 IS NOT NULL))
               AND NOT EXISTS (
                   SELECT FROM (
                       SELECT r.kind, r.expected,
                              sum(r.n) OVER (PARTITION BY r.stream ORDER BY r.o, r.kind ROWS UNBOUNDED PRECEDING) AS version
                       FROM runs AS r
                   ) AS c
                   WHERE c.kind = 1 AND (c.expected IS NULL OR (c.expected >= 0 AND c.expected <> c.version)))
               AND NOT EXISTS (
                   SELECT FROM dependencies AS d LEFT JOIN live AS k ON k.id = d.id WHERE k.o IS NULL OR k.o >= d.o)
            INTO v_all_commit;
            PERFORM set_config('logbook.decided', CASE WHEN v_all_commit THEN 'together' ELSE 'one by one' END, true);

            IF v_all_commit THEN
                -- Events numbered 1, 2, 3 ... in request order, each at its stream's next version
                -- (a running count per stream from the stream's version, again without a join).
                SELECT coalesce(array_agg(n.event_id ORDER BY n.o, n.j), '{}'),
                       coalesce(array_agg(n.stream ORDER BY n.o, n.j), '{}'),
                       coalesce(array_agg(n.category ORDER BY n.o, n.j), '{}'),
                       coalesce(array_agg(n.version ORDER BY n.o, n.j), '{}'),
                       coalesce(array_agg(n.type ORDER BY n.o, n.j), '{}'),
                       coalesce(array_agg(n.data ORDER BY n.o, n.j), '{}'),
                       coalesce(array_agg(n.command_id ORDER BY n.o, n.j), '{}'),
                       coalesce(array_agg(n.correlation_id ORDER BY n.o, n.j), '{}'),
                       coalesce(array_agg(n.causation_id ORDER BY n.o, n.j), '{}'),
                       coalesce(array_agg(n.recorded_at ORDER BY n.o, n.j), '{}'),
                       coalesce(array_agg(n.data_version ORDER BY n.o, n.j), '{}'),
                       count(*)
                INTO e_event_id, e_stream, e_category, e_version, e_type, e_data, e_command, e_correlation,
                     e_causation, e_recorded_at, e_data_version, n_events
                FROM (
                    SELECT v.*, (sum(v.n) OVER (PARTITION BY v.stream ORDER BY v.o, v.j ROWS UNBOUNDED PRECEDING))::integer
                                AS version
                    FROM (
                        SELECT u.s AS stream, 0::bigint AS o, 0::bigint AS j, u.v AS n, NULL AS event_id,
                               NULL AS category, NULL AS type, NULL AS data, NULL::bigint AS recorded_at,
                               NULL::integer AS data_version, NULL AS command_id, NULL AS correlation_id,
                               NULL AS causation_id
                        FROM unnest(v_streams, v_versions) AS u(s, v)
                        UNION ALL
                        SELECT x.x->>1, b.o, x.j, 1, x.x->>0, x.x->>2, x.x->>3, x.x->>4, (x.x->>5)::bigint,
                               (x.x->>6)::integer, b.r->>0, b.r->>1, b.r->>2
                        FROM jsonb_array_elements(batch) WITH ORDINALITY AS b(r, o)
                        CROSS JOIN LATERAL jsonb_array_elements(b.r->6) WITH ORDINALITY AS x(x, j)
                        WHERE NOT (b.r->>0 = ANY (v_recorded))
                    ) AS v
                ) AS n
                WHERE n.o > 0;
                -- Each request: a duplicate, or committed with the events after those of the
                -- requests before it (an answer: none, at the head they reached).
                SELECT array_agg(CASE WHEN q.recorded THEN 'duplicate' ELSE 'committed' END ORDER BY q.o),
                       array_agg(CASE WHEN q.n > 0 THEN q.before + 1 END ORDER BY q.o),
                       array_agg(CASE WHEN NOT q.recorded THEN q.before + q.n END ORDER BY q.o),
                       array_agg(NULL::text ORDER BY q.o), array_agg(NULL::integer ORDER BY q.o),
                       coalesce(array_agg(q.id ORDER BY q.o) FILTER (WHERE NOT q.recorded), '{}'),
                       coalesce(array_agg(CASE WHEN q.n > 0 THEN q.before + 1 END ORDER BY q.o)
                                FILTER (WHERE NOT q.recorded), '{}'),
                       coalesce(array_agg(q.before + q.n ORDER BY q.o) FILTER (WHERE NOT q.recorded), '{}'),
                       coalesce(array_agg(q.answer ORDER BY q.o) FILTER (WHERE NOT q.recorded), '{}')
                INTO r_outcome, r_first, r_last, r_detail, r_actual, c_id, c_first, c_last, c_answer
                FROM (
                    SELECT b.o, b.r->>0 AS id, b.r->>3 AS answer, b.recorded, b.n,
                           (sum(b.n) OVER (ORDER BY b.o) - b.n)::integer AS before
                    FROM (
                        SELECT b.o, b.r, (b.r->>0 = ANY (v_recorded)) AS recorded,
                               CASE WHEN b.r->>0 = ANY (v_recorded) THEN 0
                                    ELSE coalesce(jsonb_array_length(b.r->6), 0) END AS n
                        FROM jsonb_array_elements(batch) WITH ORDINALITY AS b(r, o)
                    ) AS b
                ) AS q;
                -- Every stream's version after the batch: its version and its new events, counted.
                SELECT coalesce(array_agg(f.version ORDER BY f.o), '{}') INTO v_versions
                FROM (
                    SELECT c.s, min(c.o) AS o, sum(c.n)::integer AS version
                    FROM (
                        SELECT u.s, u.o, u.v AS n FROM unnest(v_streams, v_versions) WITH ORDINALITY AS u(s, v, o)
                        UNION ALL
                        SELECT e.s, NULL, 1 FROM unnest(e_stream) AS e(s)
                    ) AS c
                    GROUP BY c.s
                ) AS f;
            ELSE
                -- Otherwise each request is decided in order, as AppendRequest.refusal does: a
                -- duplicate, then a dependency that did not commit here, then the expectations in
                -- the order given. Events get offsets 1, 2, 3 ... within the batch; nothing is
                -- written yet.
                FOR v_request IN SELECT r FROM jsonb_array_elements(batch) WITH ORDINALITY AS b(r, o) ORDER BY o LOOP
                    n_requests := n_requests + 1;
                    v_id := v_request->>0;
                    -- every array gets an entry at every index, so that unnest lines them up
                    r_outcome[n_requests] := NULL;
                    r_first[n_requests] := NULL;
                    r_last[n_requests] := NULL;
                    r_detail[n_requests] := NULL;
                    r_actual[n_requests] := NULL;
                    IF v_id = ANY (v_recorded) OR v_id = ANY (v_committed) THEN
                        r_outcome[n_requests] := 'duplicate';
                        CONTINUE;
                    END IF;
                    v_missing := NULL;
                    SELECT d INTO v_missing FROM jsonb_array_elements_text(v_request->5) WITH ORDINALITY AS x(d, o)
                    WHERE NOT (d = ANY (v_committed)) ORDER BY o LIMIT 1;
                    IF v_missing IS NOT NULL THEN
                        r_outcome[n_requests] := 'abandoned';
                        r_detail[n_requests] := v_missing;
                        CONTINUE;
                    END IF;
                    v_refused := false;
                    FOR v_item IN SELECT x FROM jsonb_array_elements(v_request->4) WITH ORDINALITY AS e(x, o) ORDER BY o LOOP
                        v_slot := array_position(v_streams, v_item->>0);
                        v_expected := (v_item->>1)::integer;
                        IF v_expected >= 0 AND v_versions[v_slot] <> v_expected THEN
                            r_outcome[n_requests] := 'conflict';
                            r_detail[n_requests] := v_item->>0;
                            r_actual[n_requests] := v_versions[v_slot];
                            v_refused := true;
                            EXIT;
                        END IF;
                    END LOOP;
                    CONTINUE WHEN v_refused;
                    n_commands := n_commands + 1;
                    c_id[n_commands] := v_id;
                    c_answer[n_commands] := v_request->>3;
                    IF v_request->>3 IS NOT NULL THEN
                        c_first[n_commands] := NULL;
                        c_last[n_commands] := n_events;
                        r_last[n_requests] := n_events;
                    ELSE
                        v_first := n_events + 1;
                        FOR v_item IN SELECT x FROM jsonb_array_elements(v_request->6) WITH ORDINALITY AS e(x, o) ORDER BY o LOOP
                            n_events := n_events + 1;
                            v_slot := array_position(v_streams, v_item->>1);
                            v_versions[v_slot] := v_versions[v_slot] + 1;
                            e_event_id[n_events] := v_item->>0;
                            e_stream[n_events] := v_item->>1;
                            e_category[n_events] := v_item->>2;
                            e_version[n_events] := v_versions[v_slot];
                            e_type[n_events] := v_item->>3;
                            e_data[n_events] := v_item->>4;
                            e_recorded_at[n_events] := (v_item->>5)::bigint;
                            e_data_version[n_events] := (v_item->>6)::integer;
                            e_command[n_events] := v_id;
                            e_correlation[n_events] := v_request->>1;
                            e_causation[n_events] := v_request->>2;
                        END LOOP;
                        c_first[n_commands] := v_first;
                        c_last[n_commands] := n_events;
                        r_first[n_requests] := v_first;
                        r_last[n_requests] := n_events;
                    END IF;
                    r_outcome[n_requests] := 'committed';
                    v_committed := v_committed || v_id;
                END LOOP;
            END IF;

            -- 4. Everything that needs no position, before the head is locked. The stream rows exist
            --    and are locked; ON CONFLICT finds each through the key's index. The claims go by
            --    their row addresses (no search among the dead rows of earlier claims).
            INSERT INTO streams AS st (stream, version) SELECT u.s, u.v FROM unnest(v_streams, v_versions) AS u(s, v)
            ON CONFLICT (stream) DO UPDATE SET version = excluded.version WHERE st.version <> excluded.version;
            DELETE FROM command_claims WHERE ctid = ANY (v_claims);

            -- 5. Last, the head: bumping it takes its row lock, held through COMMIT, so positions are
            --    handed out in commit order and a rollback takes the bump back (no hole). An append
            --    without events only reads it (sharing its lock): an answer's position is the head when
            --    it was recorded.
            IF n_events > 0 THEN
                UPDATE log_head SET position = log_head.position + n_events
                RETURNING log_head.position - n_events INTO v_base;
            ELSE
                -- FOR SHARE waits for an append that holds the head to commit, so the head read
                -- here is still the head when the commands' check reads it again.
                SELECT h.position INTO v_base FROM log_head AS h FOR SHARE;
            END IF;
            INSERT INTO events (position, event_id, stream, category, version, type, data, command_id,
                                correlation_id, causation_id, recorded_at, data_version)
            SELECT v_base + e.o, e.event_id, e.stream, e.category, e.version, e.type, e.data, e.command_id,
                   e.correlation_id, e.causation_id, e.recorded_at, e.data_version
            FROM unnest(e_event_id, e_stream, e_category, e_version, e_type, e_data, e_command, e_correlation,
                        e_causation, e_recorded_at, e_data_version)
                 WITH ORDINALITY AS e(event_id, stream, category, version, type, data, command_id, correlation_id,
                                      causation_id, recorded_at, data_version, o);
            INSERT INTO commands (command_id, first_position, last_position, answer)
            SELECT c.id, v_base + c.f, v_base + c.l, c.a FROM unnest(c_id, c_first, c_last, c_answer) AS c(id, f, l, a);

            RETURN QUERY
            SELECT r.o::integer, r.outcome, v_base + coalesce(r.f, r.l), r.detail, r.actual,
                   CASE WHEN r.f IS NULL THEN NULL ELSE e_version[r.f:r.l] END
            FROM unnest(r_outcome, r_first, r_last, r_detail, r_actual) WITH ORDINALITY AS r(outcome, f, l, detail, actual, o)
            ORDER BY r.o;
        END
        $append$;
        """
}
