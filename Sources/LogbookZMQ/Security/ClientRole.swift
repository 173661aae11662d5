/// What a client's key may do on the bus (ARCHITECTURE §11), from its certificate's `role`.
/// Writers send commands (and, as a PostgreSQL worker's key, commit hints to the feed
/// processes); readers query, subscribe and read the log; admins may do all of that and
/// also ask `Status` and `Rebuild`, forget users and manage consumer groups; readers also
/// consume from groups.
public enum ClientRole: String, Sendable, CaseIterable, CustomStringConvertible {
    case writer, reader, admin

    /// The metadata property of a client certificate that names its role.
    public static let metadataName = "role"

    /// Whether this role may do `action`.
    public func may(_ action: BusAction) -> Bool {
        switch (self, action) {
        case (.admin, _): true
        case (.writer, .command), (.writer, .hint): true
        case (.reader, .query), (.reader, .subscribe), (.reader, .readLog), (.reader, .consume): true
        default: false
        }
    }

    public var description: String { rawValue }
}

/// Something a client asks of a server, as the roles see it.
public enum BusAction: String, Sendable, CaseIterable, CustomStringConvertible {
    /// A command on the commands socket.
    case command
    /// `ForgetUser`, the command that destroys a person's data for good.
    case forget
    /// A query on the queries socket.
    case query
    /// Following the change feed (decided at the handshake: a PUB socket reads nothing).
    case subscribe
    /// `ReadLog` on the log socket.
    case readLog
    /// `Status` on the commands or the queries socket.
    case status
    /// `Rebuild` on the queries socket.
    case rebuild
    /// A worker's commit hint to a feed process (PostgreSQL).
    case hint
    /// Consuming as a member of a consumer group (`Join`, `Ack`, …) on the groups socket.
    case consume
    /// Creating, showing, deleting consumer groups and handling their parked events, and the
    /// groups process's `Status`.
    case manageGroups

    public var description: String { rawValue }
}
