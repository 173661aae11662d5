public import LogbookApplication
public import LogbookJSON

/// A query process's answer to `Status` (the `result` of `query-status-reply.schema.json`,
/// and of a `Rebuild` reply): how far its read models are against the log's head as it last
/// learned it, the generation it answers from, what it has done since it started, its rows
/// (nil when they could not be counted) and any rebuild. `json` is its one JSON form,
/// members in a fixed order; `init(json:)` reads that form back and refuses anything else.
public struct QueryStatus: Sendable, Equatable {
    public static let role = "query"

    /// Every event at or before this position is in the read models.
    public var checkpoint: Int64
    public var head: Int64
    public var generation: Int
    public var uptimeSeconds: Int64
    public var eventsApplied: Int
    public var holesDetected: Int
    public var queriesAnswered: Int
    /// Queries parked until the read models reach their `minPosition`.
    public var queriesWaiting: Int
    public var readModels: ReadModelCounts?
    public var rebuild: RebuildState
    /// With CURVE on: handshakes admitted and refused, requests dropped (revoked keys).
    public var peers: PeerStatus?
    /// Seconds since the read models last reached the head they knew (0 when they are
    /// there); nil from a query process that does not say.
    public var lagSeconds: Double?

    public init(
        checkpoint: Int64, head: Int64, generation: Int, uptimeSeconds: Int64, eventsApplied: Int,
        holesDetected: Int, queriesAnswered: Int, queriesWaiting: Int, readModels: ReadModelCounts?,
        rebuild: RebuildState, peers: PeerStatus? = nil, lagSeconds: Double? = nil
    ) {
        self.lagSeconds = lagSeconds
        self.checkpoint = checkpoint
        self.head = head
        self.generation = generation
        self.uptimeSeconds = uptimeSeconds
        self.eventsApplied = eventsApplied
        self.holesDetected = holesDetected
        self.queriesAnswered = queriesAnswered
        self.queriesWaiting = queriesWaiting
        self.readModels = readModels
        self.rebuild = rebuild
        self.peers = peers
    }

    /// How many events the read models are behind the head (never negative).
    public var lag: Int64 { max(0, head - checkpoint) }

    static let fields = [
        "role", "checkpoint", "head", "lag", "generation", "uptimeSeconds", "eventsApplied", "holesDetected",
        "queriesAnswered", "queriesWaiting", "readModels", "rebuild", "peers", "lagSeconds",
    ]
    static let readModelFields = ["users", "posts", "products", "orders"]

    /// `{"role":"query","checkpoint","head","lag","generation","uptimeSeconds","eventsApplied",
    /// "holesDetected","queriesAnswered","queriesWaiting","readModels"?:{…},"rebuild":{…},"peers"?:{…},
    /// "lagSeconds"?}`.
    public var json: JSONValue {
        var result: JSONObject = [
            "role": .string(Self.role),
            "checkpoint": .int(Int(checkpoint)),
            "head": .int(Int(head)),
            "lag": .int(Int(lag)),
            "generation": .int(generation),
            "uptimeSeconds": .int(Int(uptimeSeconds)),
            "eventsApplied": .int(eventsApplied),
            "holesDetected": .int(holesDetected),
            "queriesAnswered": .int(queriesAnswered),
            "queriesWaiting": .int(queriesWaiting),
        ]
        if let readModels {
            result["readModels"] = [
                "users": .int(readModels.users), "posts": .int(readModels.posts),
                "products": .int(readModels.products), "orders": .int(readModels.orders),
            ]
        }
        result["rebuild"] = rebuild.json
        if let peers { result["peers"] = peers.json }
        if let lagSeconds { result["lagSeconds"] = .double(lagSeconds) }
        return .object(result)
    }

    /// Reads what `json` writes; a `lag` other than `head − checkpoint` (at least 0) is refused.
    public init(json: JSONValue) throws(StatusDocumentError) {
        let fields = try StatusFields(json, at: "result", allowed: Self.fields)
        try fields.constant("role", Self.role)
        var readModels: ReadModelCounts?
        if fields.has("readModels") {
            let counts = try fields.object("readModels", allowed: Self.readModelFields)
            readModels = ReadModelCounts(
                users: try counts.int("users"), posts: try counts.int("posts"), products: try counts.int("products"),
                orders: try counts.int("orders"))
        }
        self.init(
            checkpoint: Int64(try fields.int("checkpoint")), head: Int64(try fields.int("head")),
            generation: try fields.int("generation"), uptimeSeconds: Int64(try fields.int("uptimeSeconds")),
            eventsApplied: try fields.int("eventsApplied"), holesDetected: try fields.int("holesDetected"),
            queriesAnswered: try fields.int("queriesAnswered"), queriesWaiting: try fields.int("queriesWaiting"),
            readModels: readModels, rebuild: try RebuildState(json: try fields.value("rebuild"), at: "result.rebuild"),
            peers: try PeerStatus.read(from: fields),
            lagSeconds: fields.has("lagSeconds") ? try fields.number("lagSeconds") : nil)
        guard try fields.int("lag") == Int(lag) else {
            throw StatusDocumentError(field: "result.lag", "must be head − checkpoint (at least 0), \(lag)")
        }
    }
}
