public import LogbookApplication

/// The consumer groups' definitions and progress in PostgreSQL, beside the event log in its
/// database: tables `logbook_groups`, `logbook_group_outcomes` and the marker
/// `logbook_group_schema` (`PostgresGroupSchema`), created if missing (or migrated from
/// version 1). The log must be
/// there first: the log refuses a database holding tables of anything else, so the group
/// tables are never created in one without it (`.unavailable` while the database is empty,
/// `.notAGroupStore` for another program's database or a newer group schema).
///
/// `commit` is one transaction with `synchronous_commit` on, so it is durable when it
/// returns; each kind of change is one statement over arrays (`unnest`), whatever the
/// number of rows. A change that points to a bug (a group that is not there, an outcome at
/// or before its group's checkpoint, a checkpoint moved back, a category that is empty or
/// holds a comma) is `.failed`; creating a name that exists is `.groupExists`; connection
/// trouble is `.unavailable` (a commit's outcome is then unknown; the next call reconnects).
/// PostgreSQL text cannot hold NUL, so a NUL in a failure reason is stored as U+FFFD.
/// One connection, used by one thread at a time.
public final class PostgresGroupStore: GroupStore {
    /// The database, host and port, for messages (never the password).
    public let target: String
    private let connectionString: String
    private var connection: PostgresConnection?

    /// Opens the group tables in the database `url` names (a `postgresql://` URI or
    /// `key=value` pairs, as libpq reads them), creating them beside the event log if missing.
    public init(url: String) throws(GroupStoreError) {
        if let problem = PostgresConnection.malformation(of: url) { throw .notAGroupStore(problem) }
        let target = PostgresConnection.target(of: url)
        self.target = target
        connectionString = url
        let connection = try Self.connect(url, target: target)
        do {
            try PostgresGroupSchema.prepare(connection, target: target)
        } catch let error as GroupStoreError {
            throw error
        } catch let error as PostgresError {
            throw Self.storeError(error, target: target)
        } catch {
            throw .failed("\(target): \(error)")
        }
        self.connection = connection
    }

    /// A new connection whose commits are flushed before they return (`synchronous_commit`
    /// at least `on`).
    private static func connect(_ connectionString: String, target: String) throws(GroupStoreError)
        -> PostgresConnection
    {
        do {
            let connection = try PostgresConnection(connectionString: connectionString)
            try connection.execute(
                "SET default_transaction_isolation TO 'read committed'; "
                    + "SELECT set_config('synchronous_commit', 'on', false) "
                    + "WHERE current_setting('synchronous_commit') IN ('off', 'local')")
            return connection
        } catch {
            throw storeError(error, target: target)
        }
    }

    static func storeError(_ error: PostgresError, target: String) -> GroupStoreError {
        error.isTransient ? .unavailable("\(target): \(error)") : .failed("\(target): \(error)")
    }

    /// Runs `body` on the connection, connecting first when there is none or the server
    /// dropped it; libpq's errors become `GroupStoreError`s.
    private func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws(GroupStoreError) -> T {
        if connection == nil || connection?.isBroken == true {
            connection = nil
            connection = try Self.connect(connectionString, target: target)
        }
        guard let db = connection else { throw .unavailable("\(target): not connected") }
        do {
            return try body(db)
        } catch {
            if db.isBroken { connection = nil }
            switch error {
            case let error as GroupStoreError: throw error
            case let error as PostgresError: throw Self.storeError(error, target: target)
            default: throw .failed("\(target): \(error)")
            }
        }
    }

    // MARK: Reads

    public func groups() throws(GroupStoreError) -> [GroupRecord] {
        try withConnection { db in
            let rows = try db.query(
                """
                SELECT name, categories, ack_wait_ms, max_deliver, max_in_flight, created_at, checkpoint
                FROM logbook_groups ORDER BY name COLLATE "C"
                """)
            return (0..<rows.count).map { row in
                GroupRecord(
                    name: GroupName(stored: rows.string(row, 0)),
                    categories: rows.string(row, 1).split(separator: ",").map(String.init),
                    settings: GroupSettings(
                        checked: Int(rows.int64(row, 2)), maxDeliver: Int(rows.int64(row, 3)),
                        maxInFlight: Int(rows.int64(row, 4))),
                    createdAt: rows.int64(row, 5), checkpoint: rows.int64(row, 6))
            }
        }
    }

    public func outcomes(of group: GroupName, after: Int64, limit: Int) throws(GroupStoreError) -> [EventOutcome] {
        guard limit > 0 else { return [] }
        return try withConnection { db in
            let rows = try db.query(
                """
                SELECT position, done, attempts, parked, last_failure FROM logbook_group_outcomes
                WHERE group_name = $1 AND position > $2::bigint ORDER BY position LIMIT $3::bigint
                """, [group.rawValue, String(after), String(limit)])
            return (0..<rows.count).map { row in
                EventOutcome(
                    position: rows.int64(row, 0), isDone: rows.string(row, 1) == "t",
                    attempts: Int(rows.int64(row, 2)), parked: rows.string(row, 3) == "t",
                    lastFailure: rows.optionalString(row, 4))
            }
        }
    }

    // MARK: Commit

    public func commit(_ changes: GroupChanges) throws(GroupStoreError) {
        guard !changes.isEmpty else { return }
        var rolledBack = true
        defer { if !rolledBack { connection = nil } }
        try withConnection { db in
            try db.execute("BEGIN")
            do {
                try delete(changes.deleted, db)
                try create(changes.created, db)
                try apply(changes.groups.filter { !$0.value.isEmpty }.sorted { $0.key < $1.key }, db)
                try db.execute("COMMIT")
            } catch {
                // A connection that cannot roll back is closed, which ends the transaction.
                if !db.isBroken {
                    do { try db.execute("ROLLBACK") } catch { rolledBack = false }
                }
                throw error
            }
        }
    }

    /// Deletes the groups and their outcomes; each must exist.
    private func delete(_ names: [GroupName], _ db: PostgresConnection) throws {
        guard !names.isEmpty else { return }
        let rows = try db.query(
            """
            WITH names AS (SELECT DISTINCT n FROM unnest($1::text[]) AS u(n)),
                 outcomes AS (DELETE FROM logbook_group_outcomes WHERE group_name IN (SELECT n FROM names))
            DELETE FROM logbook_groups WHERE name IN (SELECT n FROM names) RETURNING name
            """, [PostgresParameters.textArray(names.map(\.rawValue))])
        var deleted = Set((0..<rows.count).map { rows.string($0, 0) })
        for name in names where deleted.remove(name.rawValue) == nil { throw Self.noGroup(name) }
    }

    /// Creates the groups; none may exist (after the deletions) or be created twice.
    private func create(_ records: [GroupRecord], _ db: PostgresConnection) throws {
        guard !records.isEmpty else { return }
        let names = records.map(\.name.rawValue)
        let rows = try db.query(
            "SELECT name FROM logbook_groups WHERE name = ANY ($1::text[])", [PostgresParameters.textArray(names)])
        var taken = Set((0..<rows.count).map { rows.string($0, 0) })
        for record in records {
            guard taken.insert(record.name.rawValue).inserted else { throw GroupStoreError.groupExists(record.name) }
            if let category = record.categories.first(where: { $0.isEmpty || $0.contains(",") }) {
                throw GroupStoreError.failed(
                    "group \(record.name): the category \"\(category)\" is empty or holds a comma")
            }
        }
        _ = try db.query(
            """
            INSERT INTO logbook_groups (name, categories, ack_wait_ms, max_deliver, max_in_flight, created_at,
                                        checkpoint)
            SELECT * FROM unnest($1::text[], $2::text[], $3::integer[], $4::integer[], $5::integer[], $6::bigint[],
                                 $7::bigint[])
            """,
            [
                PostgresParameters.textArray(names),
                PostgresParameters.textArray(records.map { $0.categories.joined(separator: ",") }),
                PostgresParameters.integerArray(records.map { Int64($0.settings.ackWaitMilliseconds) }),
                PostgresParameters.integerArray(records.map { Int64($0.settings.maxDeliver) }),
                PostgresParameters.integerArray(records.map { Int64($0.settings.maxInFlight) }),
                PostgresParameters.integerArray(records.map(\.createdAt)),
                PostgresParameters.integerArray(records.map(\.checkpoint)),
            ])
    }

    /// The stored checkpoints of the groups `$1`, locked until the commit.
    private static let lockCheckpoints = PostgresStatement(
        "SELECT name, checkpoint FROM logbook_groups WHERE name = ANY ($1::text[]) FOR UPDATE")

    /// Outcomes, one per element of the arrays `$1` … `$6` (group, position, done, attempts,
    /// parked, last failure), written over any stored for the same event.
    private static let writeOutcomes = PostgresStatement(
        """
        INSERT INTO logbook_group_outcomes (group_name, position, done, attempts, parked, last_failure)
        SELECT * FROM unnest($1::text[], $2::bigint[], $3::boolean[], $4::integer[], $5::boolean[], $6::text[])
        ON CONFLICT (group_name, position) DO UPDATE
        SET done = excluded.done, attempts = excluded.attempts, parked = excluded.parked,
            last_failure = excluded.last_failure
        """)

    /// The checkpoints `$2` of the groups `$1`, with the outcomes at or before them forgotten.
    private static let moveCheckpoints = PostgresStatement(
        """
        WITH moved AS (
            UPDATE logbook_groups AS g SET checkpoint = u.c
            FROM unnest($1::text[], $2::bigint[]) AS u(n, c) WHERE g.name = u.n
            RETURNING g.name, g.checkpoint
        )
        DELETE FROM logbook_group_outcomes AS o USING moved AS m
        WHERE o.group_name = m.name AND o.position <= m.checkpoint
        """)

    /// Every group's progress, each kind of change one statement for all groups: their
    /// outcomes (checked against their stored checkpoints), then their checkpoints, which
    /// forget the outcomes at or before them.
    private func apply(_ groups: [(key: GroupName, value: GroupChanges.Progress)], _ db: PostgresConnection) throws {
        guard !groups.isEmpty else { return }
        let names = groups.map(\.key.rawValue)
        let rows = try db.query(Self.lockCheckpoints, [PostgresParameters.textArray(names)])
        let stored = Dictionary(uniqueKeysWithValues: (0..<rows.count).map { (rows.string($0, 0), rows.int64($0, 1)) })
        for (name, progress) in groups {
            guard let checkpoint = stored[name.rawValue] else { throw Self.noGroup(name) }
            if let early = progress.outcomes.keys.min(), early <= checkpoint {
                throw GroupStoreError.failed(
                    "group \(name): position \(early) is at or before its checkpoint \(checkpoint)")
            }
            if let moved = progress.checkpoint, moved < checkpoint {
                throw GroupStoreError.failed(
                    "group \(name): the checkpoint cannot move back from \(checkpoint) to \(moved)")
            }
        }
        let outcomes = groups.flatMap { group in
            group.value.outcomes.sorted { $0.key < $1.key }.map { (group.key, $0.key, $0.value) }
        }
        if !outcomes.isEmpty {
            _ = try db.query(
                Self.writeOutcomes,
                [
                    PostgresParameters.textArray(outcomes.map(\.0.rawValue)),
                    PostgresParameters.integerArray(outcomes.map(\.1)),
                    PostgresParameters.booleanArray(outcomes.map(\.2.isDone)),
                    PostgresParameters.integerArray(outcomes.map { Int64($0.2.attempts) }),
                    PostgresParameters.booleanArray(outcomes.map(\.2.parked)),
                    PostgresParameters.nullableTextArray(outcomes.map { Self.storable($0.2.lastFailure) }),
                ])
        }
        let moved = groups.compactMap { group in
            group.value.checkpoint.flatMap { $0 > (stored[group.key.rawValue] ?? .max) ? (group.key, $0) : nil }
        }
        guard !moved.isEmpty else { return }
        _ = try db.query(
            Self.moveCheckpoints,
            [
                PostgresParameters.textArray(moved.map(\.0.rawValue)),
                PostgresParameters.integerArray(moved.map(\.1)),
            ])
    }

    /// `text` as PostgreSQL can hold it: a NUL becomes U+FFFD.
    private static func storable(_ text: String?) -> String? {
        guard let text, text.utf8.contains(0) else { return text }
        return String(text.map { $0 == "\u{0}" ? "\u{FFFD}" : $0 })
    }

    static func noGroup(_ name: GroupName) -> GroupStoreError {
        .failed("there is no group named \(name)")
    }
}
