public import LogbookApplication

/// The event log in a PostgreSQL database, shared by any number of stores in any number of
/// processes and hosts (the scale-out backend). Keeps every promise of `EventStore` across
/// all of them at once:
///
/// - a batch is appended by one call of the server-side function `logbook_append` (one round
///   trip, its own transaction, committed with `synchronous_commit` on before it returns);
/// - positions run 1, 2, 3 … without holes, in commit order, however many writers commit
///   at once and whatever rolls back (see `PostgresSchema` for how, `read` for why readers
///   never see a gap);
/// - a command id is appended once even when several stores send it at the same moment:
///   the second waits for the first to commit and answers its record (`.duplicate`);
/// - the database itself refuses to change or remove events and command records, and
///   refuses, from any writer, an insert that would leave a hole (`PostgresSchema.holeChecks`);
/// - an append not answered within its patience (no synchronous standby acknowledges its
///   commit) is cancelled and fails with `.unavailable`, its outcome unknown;
/// - what `read`, `visitEvents` and `headPosition` return is on every synchronous standby
///   (`PostgresStandbyFence`), so what the feed and `ReadLog` serve survives a failover; on a
///   store that reads a streaming replica, those of the primary it names.
///
/// Opening creates or migrates the schema, and refuses a malformed connection string, an
/// unreachable server, a failed login, another program's database and a newer schema with
/// a one-line `EventStoreError`. Two connections per store, each behind a mutex: one for
/// appends and the log's reads, one, made at first use, for stream and command reads (so a
/// worker decides its next batch while the last one's append is in flight: `send`); calls
/// block. A
/// connection the server closed while it was idle is replaced before the next call; a call
/// whose connection drops under it fails with `.unavailable` (an append's outcome is then
/// unknown: retry it with the same command ids) and the next call reconnects.
public final class PostgresEventStore: EventStore {
    /// The database, host and port, for messages (never the password).
    public let target: String
    private let connection: PostgresConnectionSlot
    /// The connection for the reads a worker's decisions make (`readStream`,
    /// `readWholeStreams`, `commandRecord`), made at the first of them: free while an append
    /// sent ahead (`send`) holds the other.
    private let decisionReads: PostgresConnectionSlot
    private let evolution: EventEvolution
    private let commitPatience: Duration
    /// The primary whose synchronous standbys reads wait for, when this store reads a replica.
    private let primary: PostgresPrimaryLink?

    /// How long an append waits for its answer before asking the server to cancel it: far
    /// longer than any append takes while the synchronous standbys keep up, so it ends only
    /// the waits of a commit no standby acknowledges (all of them down, with strict
    /// synchronous mode). Such a commit returns with a warning and is answered `.unavailable`.
    public static let defaultCommitPatience = Duration.seconds(10)

    /// Opens (creating or migrating if needed) the log in the database `connectionString`
    /// names: a `postgresql://user@host:port/database` URI or `key=value` pairs, as libpq reads them.
    /// An append not answered within `commitPatience` is cancelled (`defaultCommitPatience`).
    /// With `primary` (its connection string) the database may be a streaming replica of that
    /// primary, read from (`--read-store`): reads wait for the primary's synchronous standbys.
    public init(
        connectionString: String, evolution: EventEvolution = .standard,
        commitPatience: Duration = PostgresEventStore.defaultCommitPatience, primary: String? = nil
    ) throws(EventStoreError) {
        if let problem = PostgresConnection.malformation(of: connectionString) { throw .invalidRequest(problem) }
        self.commitPatience = commitPatience
        self.primary = try primary.map { connectionString throws(EventStoreError) in
            try PostgresPrimaryLink(connectionString: connectionString)
        }
        let target = PostgresConnection.target(of: connectionString)
        self.target = target
        self.evolution = evolution
        let connection = try Self.connect(connectionString, target: target)
        do {
            try PostgresPreparation.prepare(connection, target: target)
        } catch let error as EventStoreError {
            throw error
        } catch let error as PostgresError {
            throw Self.storeError(error, target: target)
        } catch {
            throw .failed("\(target): \(error)")
        }
        self.connection = PostgresConnectionSlot(connection) { () throws in
            try Self.connect(connectionString, target: target)
        }
        decisionReads = PostgresConnectionSlot(nil) { () throws in try Self.connect(connectionString, target: target) }
    }

    /// A new connection with the session settings appends rely on: READ COMMITTED (each
    /// statement of the append function sees what committed while it waited for a lock)
    /// and `synchronous_commit` at least `on` (the commit is flushed before the call returns).
    private static func connect(_ connectionString: String, target: String) throws(EventStoreError)
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

    static func storeError(_ error: PostgresError, target: String) -> EventStoreError {
        if error.isTransient { return .unavailable("\(target): \(error)", cause: .databaseServer) }
        if let state = error.sqlState, ["XX001", "XX002"].contains(state) { return .corrupt("\(target): \(error)") }
        return .failed("\(target): \(error)")
    }

    /// Runs `body` on the connection (`slot`: the main one unless given), connecting first
    /// when there is none or the server dropped it; libpq's errors and unreadable events
    /// become `EventStoreError`s.
    private func withConnection<T: Sendable>(
        _ slot: PostgresConnectionSlot? = nil, _ body: (PostgresConnection) throws -> T
    ) throws(EventStoreError) -> T {
        switch (slot ?? connection).withConnection(body) {
        case .success(let value): return value
        case .failure(let error): throw storeError(error)
        }
    }

    /// What failed on a connection, as this store reports it.
    private func storeError(_ error: any Error) -> EventStoreError {
        switch error {
        case let error as EventStoreError: error
        case let error as PostgresError: Self.storeError(error, target: target)
        case let error as UnreadableEvent:
            .unreadableEvent(position: error.position, reason: error.cause.description)
        default: .failed("\(target): \(error)")
        }
    }

    /// A stored event that `evolution` cannot bring to the current shape.
    private struct UnreadableEvent: Error {
        var position: Int64
        var cause: EventUpcastError
    }

    // MARK: Append

    public func append(_ batch: [AppendRequest]) throws(EventStoreError) -> [AppendResult] {
        try send(batch).results()
    }

    /// True: `send` returns once the batch is on its way to the server.
    public var sendsAhead: Bool { true }

    /// The call of `logbook_append` that appends a batch.
    static let appendCall = PostgresStatement(
        "SELECT ordinal, outcome, at_position, detail, actual, versions FROM logbook_append($1::jsonb)")

    /// Sends the batch to `logbook_append` on the main connection, which stays with the
    /// append until its results are taken; the decisions' reads go on meanwhile on a
    /// connection of their own. The commit patience runs from the sending.
    public func send(_ batch: [AppendRequest]) throws(EventStoreError) -> AppendInFlight {
        if let problem = batch.lazy.compactMap(\.malformation).first { throw .invalidRequest(problem) }
        guard !batch.isEmpty else { return .answered(.success([])) }
        let parameter = PostgresParameters.batch(batch, evolution: evolution)
        let db: PostgresConnection
        switch connection.lend() {
        case .success(let lent): db = lent
        case .failure(let error): throw storeError(error)
        }
        let warnings = db.warningCount
        let deadline = ContinuousClock.now + commitPatience
        do {
            try db.send(Self.appendCall, [parameter])
        } catch {
            connection.giveBack(db)
            throw storeError(error)
        }
        return AppendInFlight(descriptor: db.socket, deadline: deadline) { [self] () throws(EventStoreError) in
            defer { connection.giveBack(db) }
            do {
                return try results(of: batch, db.answer(cancellingAt: deadline), warnings: warnings, db)
            } catch {
                throw storeError(error)
            }
        }
    }

    /// The results of `batch` from `logbook_append`'s rows, on the connection that sent it
    /// (`warnings`: its count of warnings before).
    private func results(of batch: [AppendRequest], _ rows: PostgresRows, warnings: Int, _ db: PostgresConnection)
        throws -> [AppendResult]
    {
        // A commit whose wait for the synchronous standby was cancelled returns after a
        // warning, committed on the primary alone: not to be acknowledged, since a
        // failover may take it back. Its commands are sent again, and answered once safe.
        guard db.warningCount == warnings else {
            throw EventStoreError.unavailable(
                "\(target): the server warned while the batch committed (a wait for a synchronous standby "
                    + "cut short?): its outcome is not known to be safe; send the commands again",
                cause: .unknown)
        }
        guard rows.count == batch.count else {
            throw EventStoreError.failed("\(target): logbook_append answered \(rows.count) of \(batch.count)")
        }
        let results = try batch.enumerated().map { index, request throws -> AppendResult in
            try Self.result(of: request, row: index, rows, db, evolution)
        }
        // A retried command is answered from its record only once the standbys hold it
        // (its first commit may be one of those cut short).
        if results.contains(where: { if case .duplicate = $0 { true } else { false } }) {
            try PostgresStandbyFence.wait(db, target: target)
        }
        return results
    }

    /// The result the function's row `row` reports for `request`. Duplicates are read back
    /// after the commit: a record, once committed, never changes.
    private static func result(
        of request: AppendRequest, row: Int, _ rows: PostgresRows, _ db: PostgresConnection,
        _ evolution: EventEvolution
    ) throws -> AppendResult {
        switch rows.string(row, 1) {
        case "committed":
            let position = rows.int64(row, 2)
            if let answer = request.answer {
                return .committed(.answered(commandId: request.commandId, position: position, answer: answer))
            }
            let versions = rows.string(row, 5).dropFirst().dropLast().split(separator: ",").compactMap { Int($0) }
            guard versions.count == request.events.count else {
                throw EventStoreError.failed(
                    "logbook_append returned \(versions.count) versions for \(request.commandId)")
            }
            let events = zip(request.events, versions).enumerated().map { offset, pair in
                RecordedEvent(
                    position: position + Int64(offset), eventId: pair.0.eventId, stream: pair.0.stream,
                    version: pair.1, type: pair.0.type, data: pair.0.data, metadata: request.metadata,
                    recordedAt: pair.0.recordedAt)
            }
            return .committed(.appended(CommittedCommand(commandId: request.commandId, events: events)))
        case "duplicate":
            do {
                guard let record = try commandRecord(request.commandId, db, evolution) else {
                    throw EventStoreError.failed("the record of \(request.commandId) vanished")
                }
                return .duplicate(record)
            } catch let error as UnreadableEvent {
                return .unreadableRecord(
                    .unreadableEvent(position: error.position, reason: error.cause.description))
            }
        case "conflict":
            let stream = rows.string(row, 3)
            return .conflict(
                VersionConflict(
                    stream: stream, expected: request.expectations[stream] ?? .any, actual: Int(rows.int64(row, 4))))
        case "abandoned":
            return .abandoned(dependency: rows.string(row, 3))
        case let other:
            throw EventStoreError.failed("logbook_append answered '\(other)' for \(request.commandId)")
        }
    }

    // MARK: Reads
    //
    // Why a plain `WHERE position >= $1 ORDER BY position` never shows a reader position
    // P + 1 while P is still invisible: positions are assigned only by an append holding
    // the head row's lock, which it keeps until its COMMIT has been flushed and made visible
    // (PostgreSQL releases a transaction's locks after that). The append that assigns P + 1
    // therefore starts numbering only after the one holding P has committed (or rolled back,
    // taking its bump of the head with it), so commits happen in position order and every
    // snapshot sees a prefix 1 … H of the log. No reader waits out a gap, because there is none.

    private static let columns =
        "position, event_id, stream, version, type, data, command_id, correlation_id, causation_id, recorded_at, "
        + "data_version"

    /// `columns` of the `events` table called `e`.
    private static let eventColumns = columns.split(separator: ", ").map { "e.\($0)" }.joined(separator: ", ")

    /// The events in `rows` from column `first` on (laid out as `columns`), each in its
    /// type's current shape.
    private static func events(_ rows: PostgresRows, from first: Int = 0, _ evolution: EventEvolution) throws
        -> [RecordedEvent]
    {
        var events: [RecordedEvent] = []
        events.reserveCapacity(rows.count)
        try visitRows(rows, from: first, evolution) { event in
            events.append(event.recordedEvent)
            return true
        }
        return events
    }

    /// Hands each event of `rows` (from column `first` on, rows whose column `first` is NULL
    /// skipped) to `body` as borrowed bytes of its values, in its type's current shape,
    /// until the rows end or `body` answers false. Only a payload of an older version is
    /// copied (to be upcast).
    private static func visitRows(
        _ rows: PostgresRows, from first: Int, _ evolution: EventEvolution, _ body: (StoredEventBytes) -> Bool
    ) throws {
        for row in 0..<rows.count where !rows.isNull(row, first) {
            let position = rows.int64(row, first)
            let type = rows.bytes(row, first + 4)
            let version = Int(rows.int64(row, first + 10))
            func event(data: UnsafeBufferPointer<UInt8>) -> StoredEventBytes {
                StoredEventBytes(
                    position: position, eventId: rows.bytes(row, first + 1), stream: rows.bytes(row, first + 2),
                    version: Int(rows.int64(row, first + 3)), type: type, data: data,
                    commandId: rows.bytes(row, first + 6), correlationId: rows.bytes(row, first + 7),
                    causationId: rows.bytes(row, first + 8), recordedAt: rows.int64(row, first + 9))
            }
            let more: Bool
            if evolution.isCurrent(type: type, version: version) {
                more = body(event(data: rows.bytes(row, first + 5)))
            } else {
                var data: String
                do {
                    data = try evolution.upcast(
                        type: StoredEventBytes.text(type), version: version, data: rows.string(row, first + 5))
                } catch {
                    throw UnreadableEvent(position: position, cause: error)
                }
                more = data.withUTF8 { body(event(data: $0)) }
            }
            guard more else { return }
        }
    }

    private static func commandRecord(_ commandId: String, _ db: PostgresConnection, _ evolution: EventEvolution)
        throws -> CommandRecord?
    {
        let rows = try db.query(
            "SELECT c.first_position, c.last_position, c.answer, \(eventColumns) FROM commands AS c LEFT JOIN events AS e ON e.position BETWEEN c.first_position AND c.last_position "
                + "WHERE c.command_id = $1 ORDER BY e.position",
            [commandId])
        guard rows.count > 0 else { return nil }
        guard !rows.isNull(0, 0) else {
            return .answered(commandId: commandId, position: rows.int64(0, 1), answer: rows.string(0, 2))
        }
        return .appended(CommittedCommand(commandId: commandId, events: try events(rows, from: 3, evolution)))
    }

    public func readStream(_ stream: String, fromVersion: Int, limit: Int) throws(EventStoreError) -> [RecordedEvent] {
        try withConnection(decisionReads) { [evolution] db in
            try Self.events(
                db.query(
                    "SELECT \(Self.columns) FROM events WHERE stream = $1 AND version >= $2::bigint "
                        + "ORDER BY version LIMIT $3::bigint",
                    [stream, String(fromVersion), String(max(limit, 0))]), evolution)
        }
    }

    /// All of them in one query: one round trip to the server instead of one a stream. Each
    /// stream is its own index range (`OFFSET 0` keeps the planner from turning the lateral
    /// subquery into a join, which it may run as a scan of the whole table when it has no
    /// statistics of it yet).
    public func readWholeStreams(_ streams: [String]) throws(EventStoreError) -> [String: [RecordedEvent]] {
        guard !streams.isEmpty else { return [:] }
        return try withConnection(decisionReads) { [evolution] db in
            let events = try Self.events(
                db.query(
                    "SELECT \(Self.eventColumns) FROM (SELECT DISTINCT unnest($1::text[])) AS u(stream) CROSS JOIN LATERAL "
                        + "(SELECT * FROM events AS s WHERE s.stream = u.stream OFFSET 0) AS e ORDER BY e.stream, e.version",
                    [PostgresParameters.textArray(streams)]), evolution)
            var found: [String: [RecordedEvent]] = [:]
            for stream in streams { found[stream] = [] }
            for event in events { found[event.stream, default: []].append(event) }
            return found
        }
    }

    public func read(fromPosition: Int64, limit: Int, categories: Set<String>?) throws(EventStoreError)
        -> [RecordedEvent]
    {
        try visitedEvents(fromPosition: fromPosition, limit: limit, categories: categories)
    }

    /// Straight from the values of the result (one round trip, all of it in memory): no
    /// `String` is made for a text field.
    public func visitEvents(
        fromPosition: Int64, limit: Int, categories: Set<String>?, _ body: (StoredEventBytes) -> Bool
    ) throws(EventStoreError) {
        try withConnection { [evolution, target, primary] db in
            let limit = String(max(limit, 0))
            let rows: PostgresRows
            if let categories {
                rows = try db.query(
                    "SELECT \(Self.columns) FROM events WHERE position >= $1::bigint AND category = ANY ($2::text[]) "
                        + "ORDER BY position LIMIT $3::bigint",
                    [String(fromPosition), PostgresParameters.textArray(categories.sorted()), limit])
            } else {
                rows = try db.query(
                    "SELECT \(Self.columns) FROM events WHERE position >= $1::bigint ORDER BY position LIMIT $2::bigint",
                    [String(fromPosition), limit])
            }
            try PostgresStandbyFence.wait(db, primary: primary, target: target)
            try Self.visitRows(rows, from: 0, evolution, body)
        }
    }

    public func headPosition() throws(EventStoreError) -> Int64 {
        try withConnection { [target, primary] db in
            let head = try db.query("SELECT position FROM log_head").int64(0, 0)
            try PostgresStandbyFence.wait(db, primary: primary, target: target)
            return head
        }
    }

    public func commandRecord(_ commandId: String) throws(EventStoreError) -> CommandRecord? {
        try withConnection(decisionReads) { [evolution] db in try Self.commandRecord(commandId, db, evolution) }
    }

    /// Every command recorded with an answer and no events (a refusal), in the order of the
    /// head it was recorded at: what a copy of the log needs besides its events.
    public func answeredCommands() throws(EventStoreError) -> [CommandRecord] {
        try withConnection { db in
            let rows = try db.query(
                "SELECT command_id, last_position, answer FROM commands WHERE first_position IS NULL "
                    + "ORDER BY last_position, command_id COLLATE \"C\"")
            return (0..<rows.count).map { row in
                .answered(commandId: rows.string(row, 0), position: rows.int64(row, 1), answer: rows.string(row, 2))
            }
        }
    }
}
