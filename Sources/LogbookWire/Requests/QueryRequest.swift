public import LogbookApplication
import LogbookDomain
public import LogbookJSON

/// A query as it arrives on the wire: `{"id","type","data","minPosition"?,"timeoutMs"?}`.
/// With `minPosition` the answer waits until the read models have applied that position
/// (read-your-writes), for at most `timeoutMs`.
public struct QueryRequest: Sendable, Equatable {
    public static let defaultTimeoutMilliseconds = 5_000
    public static let maximumTimeoutMilliseconds = 60_000
    static let wireFields: Set<String> = ["id", "type", "data", "minPosition", "timeoutMs"]

    public var id: String
    public var query: Query
    public var minPosition: Int64
    public var timeoutMilliseconds: Int

    /// A request with valid values (the wire's checks are `init(wire:)`'s).
    public init(id: String, query: Query, minPosition: Int64 = 0, timeoutMilliseconds: Int = defaultTimeoutMilliseconds)
    {
        self.id = id
        self.query = query
        self.minPosition = minPosition
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    public init(wire request: WireRequest) throws(ServiceError) {
        try request.onlyFields(Self.wireFields)
        query = try QueryParser.parse(type: request.type, data: request.object["data"] ?? .object(JSONObject()))
        id = request.id
        switch request.object["minPosition"] {
        case nil, .null?: minPosition = 0
        case .int(let position)? where position >= 0: minPosition = Int64(position)
        default: throw Self.invalid("minPosition", "must be an integer ≥ 0 (a position the answer must include)")
        }
        switch request.object["timeoutMs"] {
        case nil, .null?: timeoutMilliseconds = Self.defaultTimeoutMilliseconds
        case .int(let milliseconds)? where (1...Self.maximumTimeoutMilliseconds).contains(milliseconds):
            timeoutMilliseconds = milliseconds
        default: throw Self.invalid("timeoutMs", "must be an integer from 1 to \(Self.maximumTimeoutMilliseconds)")
        }
    }

    private static func invalid(_ field: String, _ reason: String) -> ServiceError {
        ServiceError(.invalidInput, "\(field) \(reason)", details: [("field", .string(field))])
    }

    /// The `timeout` error for a query whose read models did not reach `minPosition` in time.
    public func timedOut(at position: Int64) -> ServiceError {
        ServiceError(
            .timeout,
            "the read models reached position \(position), not \(minPosition), within \(timeoutMilliseconds) ms",
            details: [("minPosition", .int(Int(minPosition))), ("position", .int(Int(position)))])
    }

    /// `{"id","ok":true,"position","result"}`.
    public static func reply(id: String, position: Int64, result: JSONValue) -> JSONValue {
        WireEncoding.success(id: id, ["position": .int(Int(position)), "result": result])
    }
}
