public import LogbookZMQ

/// Where the servers listen (libzmq endpoint strings), as a client sees them: the service's
/// settings, except that `commands` may list several workers (ARCHITECTURE §10: any worker
/// takes any command). The defaults are the service's defaults on this machine
/// (ARCHITECTURE §2).
public struct ClientEndpoints: Sendable, Equatable {
    /// The workers' command sockets: one DEALER connects to all of them.
    public var commands: EndpointList
    /// A worker's PUB socket: the change feed.
    public var feed: String
    /// A query process's ROUTER for queries (and its `Status`, `Rebuild`).
    public var queries: String
    /// A worker's ROUTER for `ReadLog`.
    public var log: String
    /// The groups process's ROUTER (consumer groups).
    public var groups: String

    /// One worker (the commands endpoint is used as given).
    public init(
        commands: String = ServiceEndpoints.defaults.commands, feed: String = ServiceEndpoints.defaults.feed,
        queries: String = ServiceEndpoints.defaults.queries, log: String = ServiceEndpoints.defaults.log,
        groups: String = ServiceEndpoints.defaults.groups
    ) {
        self.init(commands: EndpointList(commands), feed: feed, queries: queries, log: log, groups: groups)
    }

    /// Any number of workers for commands.
    public init(
        commands: EndpointList, feed: String = ServiceEndpoints.defaults.feed,
        queries: String = ServiceEndpoints.defaults.queries, log: String = ServiceEndpoints.defaults.log,
        groups: String = ServiceEndpoints.defaults.groups
    ) {
        self.commands = commands
        self.feed = feed
        self.queries = queries
        self.log = log
        self.groups = groups
    }

    /// The endpoints of one service: one worker.
    public init(_ service: ServiceEndpoints) {
        self.init(
            commands: service.commands, feed: service.feed, queries: service.queries, log: service.log,
            groups: service.groups)
    }

    /// The endpoint string of a request/reply server; for commands, the list as a setting
    /// writes it (comma-separated).
    public func address(of server: ServerEndpoint) -> String {
        switch server {
        case .commands: commands.description
        case .queries: queries
        case .log: log
        case .groups: groups
        }
    }
}
