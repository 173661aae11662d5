import LogbookDomain

/// A command the log accepted.
public struct CommandAccepted: Sendable, Equatable {
    /// The position of the command's last event; the log's head when it changed nothing.
    public var position: Int64
    /// The events the command appended (or appended the first time, for a retry).
    public var events: [RecordedEvent]
    /// True when the command id had been committed before and nothing new was appended.
    public var wasRetry: Bool

    public init(position: Int64, events: [RecordedEvent], wasRetry: Bool) {
        self.position = position
        self.events = events
        self.wasRetry = wasRetry
    }
}

/// What became of one command.
public enum CommandOutcome: Sendable, Equatable {
    case accepted(CommandAccepted)
    case rejected(ServiceError)

    public var error: ServiceError? {
        if case .rejected(let error) = self { error } else { nil }
    }

    public var accepted: CommandAccepted? {
        if case .accepted(let accepted) = self { accepted } else { nil }
    }
}
