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
