/// The ZAP domains of Logbook's CURVE servers, so the handler knows what a client connects
/// to: request sockets admit every listed key (each message is then checked against its
/// role), the feed only keys that may subscribe (a PUB socket reads nothing to check), a
/// feed process's hints socket only keys that may hint (the workers').
public enum ZAPDomain: String, Sendable, CaseIterable {
    /// The ROUTERs: commands, queries, log reads.
    case requests = "logbook"
    /// The PUB socket of the change feed.
    case feed = "logbook-feed"
    /// A feed process's SUB socket for the workers' commit hints (PostgreSQL).
    case hints = "logbook-hints"

    /// What a key must be allowed to connect here; nil: any listed key (checked per message).
    var action: BusAction? {
        switch self {
        case .requests: nil
        case .feed: .subscribe
        case .hints: .hint
        }
    }
}
