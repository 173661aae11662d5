public import LogbookJSON

/// The worker's answer to `Status` (the `result` of `worker-status-reply.schema.json`): the
/// log's head (nil when it could not be read), how long the process has run, and what its
/// command loop has done since it started. `json` is its one JSON form, members in a fixed
/// order; `init(json:)` reads that form back and refuses anything else.
public struct WorkerStatus: Sendable, Equatable {
    /// Commands answered: accepted (retries included), rejected (refused requests included);
    /// and how many times a command was decided again after its record met a conflict
    /// (another writer changed what it read): nil from a worker that does not count them.
    public struct Commands: Sendable, Equatable {
        public var accepted: Int
        public var rejected: Int
        public var retries: Int
        public var decidedAgain: Int?

        public init(accepted: Int, rejected: Int, retries: Int, decidedAgain: Int? = nil) {
            self.accepted = accepted
            self.rejected = rejected
            self.retries = retries
            self.decidedAgain = decidedAgain
        }

        var json: JSONValue {
            var members: JSONObject = [
                "accepted": .int(accepted), "rejected": .int(rejected), "retries": .int(retries),
            ]
            if let decidedAgain { members["decidedAgain"] = .int(decidedAgain) }
            return .object(members)
        }
    }

    /// The group commits: how many, the largest and the last one's size, the mean size
    /// rounded to two decimals, and the commands in them all (nil from a worker that does
    /// not say), from which a reader finds the mean size between two of its samples.
    public struct Batches: Sendable, Equatable {
        public var count: Int
        public var largest: Int
        public var last: Int
        public var meanSize: Double
        public var commands: Int?

        public init(count: Int, largest: Int, last: Int, meanSize: Double, commands: Int? = nil) {
            self.count = count
            self.largest = largest
            self.last = last
            self.meanSize = meanSize
            self.commands = commands
        }

        var json: JSONValue {
            var members: JSONObject = [
                "count": .int(count), "largest": .int(largest), "last": .int(last), "meanSize": .double(meanSize),
            ]
            if let commands { members["commands"] = .int(commands) }
            return .object(members)
        }
    }

    /// Time spent since the process started: commands answered and the seconds from taking
    /// each off the socket to its reply, summed; group commits and their seconds, summed.
    /// Two samples give the mean latency between them (`logbook top`).
    public struct Latency: Sendable, Equatable {
        public var commands: Int
        public var commandSeconds: Double
        public var commits: Int
        public var commitSeconds: Double

        public init(commands: Int, commandSeconds: Double, commits: Int, commitSeconds: Double) {
            self.commands = commands
            self.commandSeconds = commandSeconds
            self.commits = commits
            self.commitSeconds = commitSeconds
        }

        static let fields = ["commands", "commandSeconds", "commits", "commitSeconds"]

        var json: JSONValue {
            [
                "commands": .int(commands), "commandSeconds": .double(commandSeconds), "commits": .int(commits),
                "commitSeconds": .double(commitSeconds),
            ]
        }
    }

    public static let role = "worker"

    public var head: Int64?
    public var uptimeSeconds: Int64
    public var commands: Commands
    public var batches: Batches
    /// Feed messages sent.
    public var published: Int
    /// With CURVE on: handshakes admitted and refused, requests dropped (revoked keys).
    public var peers: PeerStatus?
    /// Summed command and commit latencies (nil from a worker that does not say).
    public var latency: Latency?
    /// Connections to the worker's feed socket now (nil from a worker that does not say).
    public var subscribers: Int?

    public init(
        head: Int64?, uptimeSeconds: Int64, commands: Commands, batches: Batches, published: Int,
        peers: PeerStatus? = nil, subscribers: Int? = nil, latency: Latency? = nil
    ) {
        self.latency = latency
        self.subscribers = subscribers
        self.head = head
        self.uptimeSeconds = uptimeSeconds
        self.commands = commands
        self.batches = batches
        self.published = published
        self.peers = peers
    }

    /// `{"role":"worker","head","uptimeSeconds","commands":{…},"batches":{…},"published","peers"?:{…},
    /// "subscribers"?,"latency"?:{…}}`; `commands.decidedAgain`, `batches.commands`,
    /// `subscribers` and `latency` only when known, `peers` only with CURVE on.
    public var json: JSONValue {
        var result: JSONObject = [
            "role": .string(Self.role),
            "head": head.map { .int(Int($0)) } ?? .null,
            "uptimeSeconds": .int(Int(uptimeSeconds)),
            "commands": commands.json,
            "batches": batches.json,
            "published": .int(published),
        ]
        if let peers { result["peers"] = peers.json }
        if let subscribers { result["subscribers"] = .int(subscribers) }
        if let latency { result["latency"] = latency.json }
        return .object(result)
    }

    /// Reads what `json` writes.
    public init(json: JSONValue) throws(StatusDocumentError) {
        let fields = try StatusFields(
            json, at: "result",
            allowed: [
                "role", "head", "uptimeSeconds", "commands", "batches", "published", "peers", "subscribers", "latency",
            ])
        try fields.constant("role", Self.role)
        let commands = try fields.object("commands", allowed: ["accepted", "rejected", "retries", "decidedAgain"])
        let batches = try fields.object("batches", allowed: ["count", "largest", "last", "meanSize", "commands"])
        var latency: Latency?
        if fields.has("latency") {
            let times = try fields.object("latency", allowed: Latency.fields)
            latency = Latency(
                commands: try times.int("commands"), commandSeconds: try times.number("commandSeconds"),
                commits: try times.int("commits"), commitSeconds: try times.number("commitSeconds"))
        }
        self.init(
            head: try fields.optionalInt("head").map(Int64.init), uptimeSeconds: Int64(try fields.int("uptimeSeconds")),
            commands: Commands(
                accepted: try commands.int("accepted"), rejected: try commands.int("rejected"),
                retries: try commands.int("retries"),
                decidedAgain: commands.has("decidedAgain") ? try commands.int("decidedAgain") : nil),
            batches: Batches(
                count: try batches.int("count"), largest: try batches.int("largest"), last: try batches.int("last"),
                meanSize: try batches.number("meanSize"),
                commands: batches.has("commands") ? try batches.int("commands") : nil),
            published: try fields.int("published"), peers: try PeerStatus.read(from: fields),
            subscribers: fields.has("subscribers") ? try fields.int("subscribers") : nil, latency: latency)
    }
}
