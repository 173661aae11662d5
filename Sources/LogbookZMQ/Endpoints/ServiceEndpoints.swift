/// Where the sockets of the processes listen (libzmq endpoint strings).
public struct ServiceEndpoints: Sendable, Equatable {
    /// The worker's ROUTER for commands (and its `Status`).
    public var commands: String
    /// The worker's PUB socket: the change feed.
    public var feed: String
    /// The query process's ROUTER for queries (and its `Status`, `Rebuild`).
    public var queries: String
    /// The worker's ROUTER for `ReadLog`.
    public var log: String
    /// The groups process's ROUTER: consumer groups' members and their admins.
    public var groups: String

    public static let defaults = ServiceEndpoints(
        commands: "tcp://127.0.0.1:5555", feed: "tcp://127.0.0.1:5556", queries: "tcp://127.0.0.1:5557",
        log: "tcp://127.0.0.1:5558", groups: "tcp://127.0.0.1:5560", checked: ())

    private init(commands: String, feed: String, queries: String, log: String, groups: String, checked: Void) {
        self.commands = commands
        self.feed = feed
        self.queries = queries
        self.log = log
        self.groups = groups
    }

    public init(
        commands: String = defaults.commands, feed: String = defaults.feed, queries: String = defaults.queries,
        log: String = defaults.log, groups: String = defaults.groups
    ) {
        self.commands = commands
        self.feed = feed
        self.queries = queries
        self.log = log
        self.groups = groups
    }
}
