/// The request types of wire contract version 1 that are neither a command nor a query,
/// spelled once: a server tells them apart by this, and clients send them by it. Commands
/// and queries carry their own type names (the domain's commands, `Query.typeName`).
public enum RequestType: String, Sendable, CaseIterable {
    /// A process's `Status`, on the commands and the queries sockets.
    case status = "Status"
    /// Starts a rebuild of the read models (or joins the one under way), on the queries socket.
    case rebuild = "Rebuild"
    /// A page of the log, on the log socket.
    case readLog = "ReadLog"
}

extension WireRequest {
    /// The request's type when it is one of `RequestType`; nil for a command or a query.
    public var requestType: RequestType? { RequestType(rawValue: type) }
}
