public import LogbookJSON

/// The groups-socket request documents clients send, written once for the client library
/// and the command line: `{"id","type","group",…}`, optional members left out when absent.
public enum GroupRequestDocument {
    /// `Heartbeat`, `Leave`, `ShowGroup`, `DeleteGroup` (and a plain `Join`): the group and nothing else.
    public static func naming(_ type: GroupRequestType, id: String, group: String) -> JSONObject {
        ["id": .string(id), "type": .string(type.rawValue), "group": .string(group)]
    }

    /// `ListGroups`, `Status`.
    public static func bare(_ type: GroupRequestType, id: String) -> JSONObject {
        ["id": .string(id), "type": .string(type.rawValue)]
    }

    /// `Join`; with `maxInFlight`, the member holds at most that many deliveries at once.
    public static func join(id: String, group: String, maxInFlight: Int?) -> JSONObject {
        var document = naming(.join, id: id, group: group)
        document["maxInFlight"] = maxInFlight.map(JSONValue.int)
        return document
    }

    public static func ack(id: String, group: String, positions: [Int64]) -> JSONObject {
        var document = naming(.ack, id: id, group: group)
        document["positions"] = .array(positions.map { .int(Int($0)) })
        return document
    }

    public static func nack(id: String, group: String, position: Int64, reason: String?) -> JSONObject {
        var document = naming(.nack, id: id, group: group)
        document["position"] = .int(Int(position))
        document["reason"] = reason.map(JSONValue.string)
        return document
    }

    /// `CreateGroup`; `fromHead` sends `"from":"head"`, else `"from":1`.
    public static func create(
        id: String, group: String, topics: [String], fromHead: Bool, ackWaitMilliseconds: Int?, maxDeliver: Int?,
        maxInFlight: Int?
    ) -> JSONObject {
        var document = naming(.createGroup, id: id, group: group)
        document["topics"] = .array(topics.map(JSONValue.string))
        document["from"] = fromHead ? .string("head") : .int(1)
        document["ackWaitMs"] = ackWaitMilliseconds.map(JSONValue.int)
        document["maxDeliver"] = maxDeliver.map(JSONValue.int)
        document["maxInFlight"] = maxInFlight.map(JSONValue.int)
        return document
    }

    /// `ListParked`.
    public static func parked(id: String, group: String, limit: Int?) -> JSONObject {
        var document = naming(.listParked, id: id, group: group)
        document["limit"] = limit.map(JSONValue.int)
        return document
    }

    /// `RetryParked`, `SkipParked`.
    public static func parkedEvent(_ type: GroupRequestType, id: String, group: String, position: Int64) -> JSONObject {
        var document = naming(type, id: id, group: group)
        document["position"] = .int(Int(position))
        return document
    }
}
