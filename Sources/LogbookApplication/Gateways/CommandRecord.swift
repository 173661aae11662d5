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
