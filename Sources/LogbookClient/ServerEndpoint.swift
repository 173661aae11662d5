/// A request/reply server the client talks to. The change feed is not one: it is a PUB
/// socket a subscriber follows (see `ClientEndpoints.feed`).
public enum ServerEndpoint: String, Sendable, CaseIterable, CustomStringConvertible {
    /// The worker's command socket (and its `Status`).
    case commands
    /// The query process's socket (and its `Status`).
    case queries
    /// The worker's log-read socket (`ReadLog`).
    case log
    /// The groups process's socket (consumer groups: their admin requests).
    case groups

    public var description: String { rawValue }
}
