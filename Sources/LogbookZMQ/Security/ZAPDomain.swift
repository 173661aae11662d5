/// The ZAP domains of Logbook's CURVE servers, so the handler knows what a client connects
/// to: request sockets admit every listed key (each message is then checked against its
/// role), the feed only keys that may subscribe (a PUB socket reads nothing to check).
public enum ZAPDomain: String, Sendable, CaseIterable {
    /// The ROUTERs: commands, queries, log reads.
    case requests = "logbook"
    /// The PUB socket of the change feed.
    case feed = "logbook-feed"
}
