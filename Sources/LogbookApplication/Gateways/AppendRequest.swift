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

    /// What a store answers instead of writing this request, checked in the contract's
    /// order: a dependency that did not commit earlier in this batch (`committedInBatch`),
    /// then each stream's expectation against `currentVersion` (0 for a stream with no
    /// events), in stream-name order. Nil when the request may be written. One rule for
    /// every store, so they cannot disagree on which refusal comes first.
    public func refusal<Failure: Error>(
        committedInBatch: Set<String>, currentVersion: (String) throws(Failure) -> Int
    ) throws(Failure) -> AppendResult? {
        if let missing = dependencies.sorted().first(where: { !committedInBatch.contains($0) }) {
            return .abandoned(dependency: missing)
        }
        for (stream, expected) in expectations.sorted(by: { $0.key < $1.key }) {
            let version = try currentVersion(stream)
            if !expected.isMet(byCurrentVersion: version) {
                return .conflict(VersionConflict(stream: stream, expected: expected, actual: version))
            }
        }
        return nil
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
