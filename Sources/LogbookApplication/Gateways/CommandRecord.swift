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
    /// The command id was recorded before, but its record cannot be read back (its events
    /// are of a schema version this build does not know); nothing was appended. This
    /// request alone fails: the rest of the batch is unaffected.
    case unreadableRecord(EventStoreError)
}
