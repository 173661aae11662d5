import LogbookDomain
import LogbookJSON

/// A `ReadLog` request: events from position `from`, at most `limit`, of some topics only.
public struct LogReadRequest: Sendable, Equatable {
    public static let defaultLimit = 1_000
    public static let maximumLimit = 10_000
    static let wireFields: Set<String> = ["id", "type", "from", "limit", "topics"]

    public var from: Int64
    public var limit: Int
    /// The stream categories to read (from the topics asked for); nil for the whole log.
    public var categories: Set<String>?

    public init(from: Int64, limit: Int = Self.defaultLimit, topics: [FeedTopic]? = nil) {
        self.from = from
        self.limit = limit
        self.categories = topics.map { Set($0.map(\.category)) }
    }

    /// Reads `{"id","type":"ReadLog","from","limit"?,"topics"?}`: `from` ≥ 1, `limit` from
    /// 1 to `maximumLimit`, `topics` a list of known topic names.
    public init(wire request: WireRequest) throws(ServiceError) {
        try request.onlyFields(Self.wireFields)
        guard case .int(let from)? = request.object["from"], from >= 1 else {
            throw Self.invalid("from", "must be an integer ≥ 1 (the first position to read)")
        }
        var limit = Self.defaultLimit
        switch request.object["limit"] {
        case nil, .null?: break
        case .int(let value)? where (1...Self.maximumLimit).contains(value): limit = value
        default: throw Self.invalid("limit", "must be an integer from 1 to \(Self.maximumLimit)")
        }
        var topics: [FeedTopic]?
        switch request.object["topics"] {
        case nil, .null?: break
        case .array(let names)?:
            topics = []
            for name in names {
                guard case .string(let text) = name, let topic = FeedTopic(rawValue: text) else {
                    let known = FeedTopic.allCases.map(\.rawValue).joined(separator: ", ")
                    throw Self.invalid("topics", "must list known topics (\(known))")
                }
                topics?.append(topic)
            }
        default: throw Self.invalid("topics", "must be an array of topic names")
        }
        self.init(from: Int64(from), limit: limit, topics: topics)
    }

    private static func invalid(_ field: String, _ reason: String) -> ServiceError {
        ServiceError(.invalidInput, "\(field) \(reason)", details: [("field", .string(field))])
    }
}
