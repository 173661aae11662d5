public import LogbookJSON

/// The request documents clients send, written in one place so that the client library,
/// the command line and the log-read channel send the same bytes: members in the order
/// `{"id","type",…}`, optional members left out when absent. Values are sent as given;
/// the servers check them (`CommandRequest(wire:)`, `QueryRequest(wire:)`, `LogReadRequest(wire:)`).
public enum RequestDocument {
    /// `{"id","type":"Status"}`.
    public static func status(id: String) -> JSONObject {
        bare(id: id, .status)
    }

    /// `{"id","type":"Rebuild"}`.
    public static func rebuild(id: String) -> JSONObject {
        bare(id: id, .rebuild)
    }

    /// `{"id","type":"ReadLog","from","limit"?,"topics"?}`.
    public static func readLog(id: String, from: Int64, limit: Int? = nil, topics: [String]? = nil) -> JSONObject {
        var document: JSONObject = [
            "id": .string(id), "type": .string(RequestType.readLog.rawValue), "from": .int(Int(from)),
        ]
        document["limit"] = limit.map(JSONValue.int)
        document["topics"] = topics.map { .array($0.map(JSONValue.string)) }
        return document
    }

    /// `{"id","type","data","expectedVersion"?,"metadata"?}`, with `metadata` holding
    /// whichever of `correlationId` and `causationId` are given (absent when neither is).
    public static func command(
        id: String, type: String, data: JSONValue, expectedVersion: JSONValue? = nil, correlationId: String? = nil,
        causationId: String? = nil
    ) -> JSONObject {
        var document: JSONObject = ["id": .string(id), "type": .string(type), "data": data]
        document["expectedVersion"] = expectedVersion
        var metadata = JSONObject()
        metadata["correlationId"] = correlationId.map(JSONValue.string)
        metadata["causationId"] = causationId.map(JSONValue.string)
        if metadata.count > 0 { document["metadata"] = .object(metadata) }
        return document
    }

    /// `{"id","type","data","minPosition"?,"timeoutMs"?}`.
    public static func query(
        id: String, type: String, data: JSONValue, minPosition: Int? = nil, timeoutMilliseconds: Int? = nil
    ) -> JSONObject {
        var document: JSONObject = ["id": .string(id), "type": .string(type), "data": data]
        document["minPosition"] = minPosition.map(JSONValue.int)
        document["timeoutMs"] = timeoutMilliseconds.map(JSONValue.int)
        return document
    }

    private static func bare(id: String, _ type: RequestType) -> JSONObject {
        ["id": .string(id), "type": .string(type.rawValue)]
    }
}
