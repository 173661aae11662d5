import LogbookApplication

/// Writes batches of append requests on one connection, each batch in one write
/// transaction, with the statements it needs prepared once and bound value by value.
/// The head and stream versions come from `SQLiteKnownVersions` when no other connection
/// has committed since this one last did, and from the database otherwise. The database's
/// triggers check every row whatever this knowledge says, so a wrong version would fail
/// the batch, never write a hole. Not thread-safe: the event store keeps it behind its mutex.
final class SQLiteAppender {
    private let db: SQLiteConnection
    private let evolution: EventEvolution
    private let begin: SQLiteStatement
    private let commit: SQLiteStatement
    private let dataVersion: SQLiteStatement
    private let head: SQLiteStatement
    private let streamVersion: SQLiteStatement
    private let commandExists: SQLiteStatement
    private let insertEvent: SQLiteStatement
    private let insertCommand: SQLiteStatement
    private var known: SQLiteKnownVersions
    /// Told the head after each commit (a deferred-sync writer tells its horizon).
    var committed: ((Int64) -> Void)?

    init(_ db: SQLiteConnection, evolution: EventEvolution, capacity: Int = SQLiteKnownVersions.defaultCapacity)
        throws(SQLiteError)
    {
        self.db = db
        self.evolution = evolution
        begin = try db.statement("BEGIN IMMEDIATE")
        commit = try db.statement("COMMIT")
        dataVersion = try db.statement("PRAGMA data_version")
        head = try db.statement(SQLiteSchema.headQuery)
        streamVersion = try db.statement("SELECT COALESCE(MAX(version), 0) FROM events WHERE stream = ?")
        commandExists = try db.statement("SELECT 1 FROM commands WHERE command_id = ?")
        insertEvent = try db.statement(
            "INSERT INTO events (position, event_id, stream, category, version, type, data, command_id, "
                + "correlation_id, causation_id, recorded_at, data_version) "
                + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        insertCommand = try db.statement(
            "INSERT INTO commands (command_id, first_position, last_position, answer) VALUES (?, ?, ?, ?)")
        known = SQLiteKnownVersions(capacity: capacity)
    }

    /// How many streams' versions this connection knows now (for tests of its bound).
    var knownStreams: Int { known.count }

    /// Appends `batch` (well-formed and not empty) in one transaction and commits it: the
    /// write turn the connection holds (`SQLiteEventStore.takeTurnIfFree`), or one it begins.
    /// `retried` answers a request whose command id is already recorded (its first record).
    func append(_ batch: [AppendRequest], retried: (String) throws -> AppendResult) throws -> [AppendResult] {
        if !db.isInTransaction { try begin.runBound() }
        do {
            var state = try BatchState(dataVersion: scalar(dataVersion))
            known.trust(onlyAt: state.dataVersion)
            state.head = try known.head ?? scalar(head)
            let results = try batch.map { request in try append(request, &state, retried) }
            try commit.runBound()
            committed?(state.head)
            known.learn(head: state.head, versions: state.versions, dataVersion: state.dataVersion)
            return results
        } catch {
            known.forget()
            try? db.execute("ROLLBACK")
            throw error
        }
    }

    /// What one transaction learns as it goes: the head and every stream version it read or wrote.
    private struct BatchState {
        var dataVersion: Int64
        var head: Int64 = 0
        var versions: [String: Int] = [:]
        var committed = Set<String>()
    }

    private func append(
        _ request: AppendRequest, _ state: inout BatchState, _ retried: (String) throws -> AppendResult
    ) throws -> AppendResult {
        if try isRecorded(request.commandId) { return try retried(request.commandId) }
        if let refusal = try request.refusal(
            committedInBatch: state.committed, currentVersion: { stream in try version(of: stream, &state) })
        {
            return refusal
        }
        let committed: CommandRecord
        if let answer = request.answer {
            try insertCommand.bind(1, request.commandId)
            try insertCommand.bindNull(2)
            try insertCommand.bind(3, state.head)
            try insertCommand.bind(4, answer)
            try insertCommand.runBound()
            committed = .answered(commandId: request.commandId, position: state.head, answer: answer)
        } else {
            var recorded: [RecordedEvent] = []
            recorded.reserveCapacity(request.events.count)
            for event in request.events {
                state.head += 1
                let streamVersion = try version(of: event.stream, &state) + 1
                state.versions[event.stream] = streamVersion
                let record = RecordedEvent(
                    position: state.head, eventId: event.eventId, stream: event.stream, version: streamVersion,
                    type: event.type, data: event.data, metadata: request.metadata, recordedAt: event.recordedAt)
                try insert(record)
                recorded.append(record)
            }
            try insertCommand.bind(1, request.commandId)
            try insertCommand.bind(2, recorded[0].position)
            try insertCommand.bind(3, state.head)
            try insertCommand.bindNull(4)
            try insertCommand.runBound()
            committed = .appended(CommittedCommand(commandId: request.commandId, events: recorded))
        }
        state.committed.insert(request.commandId)
        return .committed(committed)
    }

    private func insert(_ event: RecordedEvent) throws(SQLiteError) {
        let metadata = event.metadata
        let category = event.category
        // Its eight texts are bound without SQLite copying each (a malloc and a free apiece).
        insertEvent.startUncopiedTexts(
            bytes: event.eventId.utf8.count + event.stream.utf8.count + category.utf8.count
                + event.type.utf8.count + event.data.utf8.count + metadata.commandId.utf8.count
                + metadata.correlationId.utf8.count + metadata.causationId.utf8.count)
        try insertEvent.bind(1, event.position)
        try insertEvent.bindUncopied(2, event.eventId)
        try insertEvent.bindUncopied(3, event.stream)
        try insertEvent.bindUncopied(4, category)
        try insertEvent.bind(5, Int64(event.version))
        try insertEvent.bindUncopied(6, event.type)
        try insertEvent.bindUncopied(7, event.data)
        try insertEvent.bindUncopied(8, metadata.commandId)
        try insertEvent.bindUncopied(9, metadata.correlationId)
        try insertEvent.bindUncopied(10, metadata.causationId)
        try insertEvent.bind(11, event.recordedAt)
        try insertEvent.bind(12, Int64(evolution.currentVersion(of: event.type)))
        try insertEvent.runBound()
    }

    /// The version of `stream` as of this transaction so far: written or read earlier in it,
    /// known from this connection's earlier commits, or read from the database.
    private func version(of stream: String, _ state: inout BatchState) throws(SQLiteError) -> Int {
        if let version = state.versions[stream] { return version }
        let version: Int
        if let known = known.version(of: stream) {
            version = known
        } else {
            try streamVersion.bind(1, stream)
            version = Int(try scalar(streamVersion))
        }
        state.versions[stream] = version
        return version
    }

    private func isRecorded(_ commandId: String) throws(SQLiteError) -> Bool {
        try commandExists.bind(1, commandId)
        defer { commandExists.reset() }
        return try commandExists.step()
    }

    /// The first column of the first row of a statement that returns one integer (0 for none).
    private func scalar(_ statement: SQLiteStatement) throws(SQLiteError) -> Int64 {
        defer { statement.reset() }
        guard try statement.step() else { return 0 }
        return statement.int64(0)
    }
}
