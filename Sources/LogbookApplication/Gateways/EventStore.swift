/// The append-only log every event lives in. Implementations promise:
///
/// - each `AppendRequest` is atomic across all its streams: all its events or none;
/// - every expectation is checked inside the same transaction as the write;
/// - positions run 1, 2, 3 … without holes, in commit order; versions per stream likewise;
/// - a command id is recorded with its events (or, for a command that appended nothing,
///   with the answer it was given), so a request whose id was already recorded appends
///   nothing and returns the first record (`.duplicate`);
/// - `append` of a batch is one durable transaction (group commit) in which each
///   request succeeds or fails on its own, in order, except that a request whose
///   `dependencies` did not all commit in this batch fails too (`.abandoned`); it returns
///   only once that transaction is durable, and throws (committing nothing) if it cannot be;
/// - committed events and command records are never changed or removed.
///
/// Calls block on I/O: make them from a thread you own, not from Swift concurrency's pool.
public protocol EventStore: Sendable {
    /// Appends a batch in one transaction; results come back in request order.
    func append(_ batch: [AppendRequest]) throws(EventStoreError) -> [AppendResult]

    /// Events of one stream with `version >= fromVersion`, in version order, at most `limit`.
    func readStream(_ stream: String, fromVersion: Int, limit: Int) throws(EventStoreError) -> [RecordedEvent]

    /// Events with `position >= fromPosition`, in position order, at most `limit`;
    /// only those of `categories` when it is given.
    func read(fromPosition: Int64, limit: Int, categories: Set<String>?) throws(EventStoreError) -> [RecordedEvent]

    /// The position of the last committed event, 0 for an empty log.
    func headPosition() throws(EventStoreError) -> Int64

    /// What a command id was recorded with, or nil when it never was.
    func commandRecord(_ commandId: String) throws(EventStoreError) -> CommandRecord?
}

extension EventStore {
    /// Every event of one stream from `fromVersion` on, read in pages.
    public func readWholeStream(_ stream: String, fromVersion: Int = 1, pageSize: Int = 1000)
        throws(EventStoreError) -> [RecordedEvent]
    {
        var events: [RecordedEvent] = []
        var next = fromVersion
        while true {
            let page = try readStream(stream, fromVersion: next, limit: pageSize)
            events += page
            guard page.count == pageSize, let last = page.last else { return events }
            next = last.version + 1
        }
    }
}

extension EventStore {
    /// Reads the log from `fromPosition` to its current end in pages of `pageSize`, handing
    /// each page to `body` in position order (so a reader of a huge log holds one page).
    public func forEachPage<Failure: Error>(
        fromPosition: Int64 = 1, categories: Set<String>? = nil, pageSize: Int = 1_000,
        _ body: ([RecordedEvent]) throws(Failure) -> Bool
    ) throws(PagedReadError<Failure>) {
        var next = fromPosition
        while true {
            let page: [RecordedEvent]
            do {
                page = try read(fromPosition: next, limit: pageSize, categories: categories)
            } catch {
                throw .store(error)
            }
            guard let last = page.last else { return }
            do {
                guard try body(page) else { return }
            } catch {
                throw .body(error)
            }
            guard last.position < Int64.max else { return }
            next = last.position + 1
        }
    }
}

/// Why a paged read stopped: the store failed, or the caller's body threw.
public enum PagedReadError<Failure: Error>: Error {
    case store(EventStoreError)
    case body(Failure)
}

/// What a writer expects a stream's version to be before its events are appended.
public enum ExpectedVersion: Sendable, Equatable, CustomStringConvertible {
    /// No check.
    case any
    /// The stream must have no events.
    case noStream
    /// The stream's last event must have exactly this version (1 or more).
    case exactly(Int)

    /// Whether a stream at `version` (0 when it has no events) meets the expectation.
    public func isMet(byCurrentVersion version: Int) -> Bool {
        switch self {
        case .any: true
        case .noStream: version == 0
        case .exactly(let expected): version == expected
        }
    }

    /// The expectation that a stream is still at `version`.
    public static func at(_ version: Int) -> ExpectedVersion { version == 0 ? .noStream : .exactly(version) }

    public var description: String {
        switch self {
        case .any: "any"
        case .noStream: "noStream"
        case .exactly(let version): String(version)
        }
    }
}

/// Correlation data carried by every event.
public struct EventMetadata: Sendable, Equatable {
    /// The command that produced the event.
    public var commandId: String
    /// The conversation the command belongs to (defaults to the command id).
    public var correlationId: String
    /// What caused the command (defaults to the command id).
    public var causationId: String

    public init(commandId: String, correlationId: String, causationId: String) {
        self.commandId = commandId
        self.correlationId = correlationId
        self.causationId = causationId
    }
}

/// An event about to be appended.
public struct NewEvent: Sendable, Equatable {
    public var eventId: String
    public var stream: String
    public var type: String
    /// The payload, a JSON object as text.
    public var data: String
    public var recordedAt: Int64

    public init(eventId: String, stream: String, type: String, data: String, recordedAt: Int64) {
        self.eventId = eventId
        self.stream = stream
        self.type = type
        self.data = data
        self.recordedAt = recordedAt
    }
}

/// One command's atomic write: its events in order, the expectations on every stream it
/// read or writes, and its id for idempotency. A command that appends nothing but whose
/// answer must be kept (a refusal, a no-op) carries no events and an `answer` instead.
public struct AppendRequest: Sendable, Equatable {
    public var metadata: EventMetadata
    public var events: [NewEvent]
    /// One expectation per stream; streams that are only read may appear here too.
    public var expectations: [String: ExpectedVersion]
    /// Command ids of earlier requests in the same batch whose uncommitted events this
    /// request's decision assumed. Unless each of them commits in this batch, this
    /// request is abandoned: matching versions alone do not prove the same history.
    public var dependencies: Set<String>
    /// For a request without events: the answer to record for its command id, an
    /// application-encoded document that the store keeps as it is. Nil when there are events.
    public var answer: String?

    public var commandId: String { metadata.commandId }

    public init(
        metadata: EventMetadata, events: [NewEvent], expectations: [String: ExpectedVersion],
        dependencies: Set<String> = [], answer: String? = nil
    ) {
        self.metadata = metadata
        self.events = events
        self.expectations = expectations
        self.dependencies = dependencies
        self.answer = answer
    }

    /// Why the store refuses this request outright, or nil when it is well-formed.
    public var malformation: String? {
        switch (events.isEmpty, answer) {
        case (true, nil): "command '\(commandId)' has neither events nor an answer to record"
        case (false, _?): "command '\(commandId)' has both events and an answer"
        default: nil
        }
    }
}

/// An event as the log holds it.
public struct RecordedEvent: Sendable, Equatable {
    public var position: Int64
    public var eventId: String
    public var stream: String
    public var version: Int
    public var type: String
    public var data: String
    public var metadata: EventMetadata
    /// Milliseconds since the Unix epoch, UTC.
    public var recordedAt: Int64

    public init(
        position: Int64, eventId: String, stream: String, version: Int, type: String, data: String,
        metadata: EventMetadata, recordedAt: Int64
    ) {
        self.position = position
        self.eventId = eventId
        self.stream = stream
        self.version = version
        self.type = type
        self.data = data
        self.metadata = metadata
        self.recordedAt = recordedAt
    }

    /// The part of the stream name before the first `-`.
    public var category: String { Self.category(ofStream: stream) }

    public static func category(ofStream stream: String) -> String {
        stream.firstIndex(of: "-").map { String(stream[..<$0]) } ?? stream
    }
}

/// A command's committed events, in position order.
public struct CommittedCommand: Sendable, Equatable {
    public var commandId: String
    public var events: [RecordedEvent]

    public init(commandId: String, events: [RecordedEvent]) {
        self.commandId = commandId
        self.events = events
    }

    /// The position of the command's last event.
    public var lastPosition: Int64 { events.last?.position ?? 0 }
}

/// What the log keeps for a command id: the events it appended, or the answer it got
/// when it appended nothing.
public enum CommandRecord: Sendable, Equatable {
    case appended(CommittedCommand)
    /// `position` is the log's head when the answer was recorded.
    case answered(commandId: String, position: Int64, answer: String)

    public var commandId: String {
        switch self {
        case .appended(let committed): committed.commandId
        case .answered(let commandId, _, _): commandId
        }
    }

    /// The command's events; none for an answered command.
    public var events: [RecordedEvent] {
        if case .appended(let committed) = self { committed.events } else { [] }
    }

    /// The position a reader must reach to see the command's effect.
    public var position: Int64 {
        switch self {
        case .appended(let committed): committed.lastPosition
        case .answered(_, let position, _): position
        }
    }
}

/// A stream was not at the version a request expected.
public struct VersionConflict: Error, Sendable, Equatable {
    public var stream: String
    public var expected: ExpectedVersion
    public var actual: Int

    public init(stream: String, expected: ExpectedVersion, actual: Int) {
        self.stream = stream
        self.expected = expected
        self.actual = actual
    }
}

/// What happened to one request of a batch.
public enum AppendResult: Sendable, Equatable {
    case committed(CommandRecord)
    /// The command id was recorded before (possibly earlier in the same batch); nothing was appended.
    case duplicate(CommandRecord)
    /// An expectation failed; nothing of this request was appended.
    case conflict(VersionConflict)
    /// An earlier request of the batch that this one depends on did not commit; nothing was appended.
    case abandoned(dependency: String)
}

/// Why the store could not do what was asked. When `append` throws, nothing of the batch was committed.
public enum EventStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file exists but is not a Logbook event log (another program's database, or not a database).
    case notAnEventLog(path: String, reason: String)
    /// The log was written by a newer Logbook.
    case unsupportedSchema(found: Int, supported: Int)
    /// The storage is damaged.
    case corrupt(String)
    /// The storage cannot be used right now (busy, locked, disk full, I/O error); retrying may work.
    case unavailable(String)
    /// A request the store refuses (neither events nor an answer, …).
    case invalidRequest(String)
    /// The storage refused or failed a write in a way that points to a bug, not to the disk.
    case failed(String)

    public var description: String {
        switch self {
        case .notAnEventLog(let path, let reason): "\(path) is not a Logbook event log: \(reason)"
        case .unsupportedSchema(let found, let supported):
            "the event log has schema version \(found); this build reads up to \(supported)"
        case .corrupt(let message): "the event log is corrupt: \(message)"
        case .unavailable(let message): "the event log is unavailable: \(message)"
        case .invalidRequest(let message): "invalid append request: \(message)"
        case .failed(let message): "the event log failed: \(message)"
        }
    }
}
