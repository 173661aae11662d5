public import LogbookApplication
import LogbookDomain
import LogbookJSON

extension LogReadRequest {
    static let wireFields: Set<String> = ["id", "type", "from", "limit", "topics"]

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
