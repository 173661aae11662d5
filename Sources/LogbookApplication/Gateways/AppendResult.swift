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
