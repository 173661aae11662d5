import LogbookApplication
import LogbookDomain
import LogbookJSON

/// Reads the fields of one groups-socket request, each refusal naming its field.
struct GroupFields {
    let request: WireRequest
    var object: JSONObject { request.object }

    init(_ request: WireRequest) { self.request = request }

    /// Refuses fields other than `id`, `type`, `group` and `extra`.
    func only(_ extra: Set<String>) throws(ServiceError) {
        try request.onlyFields(WireRequest.bareFields.union(["group"]).union(extra))
    }

    func group() throws(ServiceError) -> GroupName {
        guard case .string(let text)? = object["group"] else {
            throw Self.invalid("group", "is required: the group's name")
        }
        return try GroupName(text, field: "group")
    }

    func position(_ field: String = "position") throws(ServiceError) -> Int64 {
        guard case .int(let value)? = object[field], value >= 1 else {
            throw Self.invalid(field, "must be a position: an integer ≥ 1")
        }
        return Int64(value)
    }

    func positions() throws(ServiceError) -> [Int64] {
        guard case .array(let values)? = object["positions"], !values.isEmpty,
            values.count <= GroupRequest.maximumAckPositions
        else {
            throw Self.invalid("positions", "must be 1–\(GroupRequest.maximumAckPositions) positions")
        }
        var positions: [Int64] = []
        for value in values {
            guard case .int(let position) = value, position >= 1 else {
                throw Self.invalid("positions", "must hold positions: integers ≥ 1")
            }
            positions.append(Int64(position))
        }
        return positions
    }

    func reason() throws(ServiceError) -> String {
        switch object["reason"] {
        case nil, .null?: return "nacked"
        case .string(let text)? where !text.isEmpty && text.count <= GroupRequest.maximumReasonLength: return text
        default: throw Self.invalid("reason", "must be a text of 1–\(GroupRequest.maximumReasonLength) characters")
        }
    }

    func topics() throws(ServiceError) -> [FeedTopic] {
        let known = FeedTopic.allCases.map(\.rawValue).joined(separator: ", ")
        guard case .array(let values)? = object["topics"], !values.isEmpty else {
            throw Self.invalid("topics", "must name at least one topic (\(known))")
        }
        var topics: [FeedTopic] = []
        for value in values {
            guard case .string(let name) = value, let topic = FeedTopic(rawValue: name) else {
                throw Self.invalid("topics", "must hold topic names (\(known))")
            }
            if !topics.contains(topic) { topics.append(topic) }
        }
        return topics
    }

    func optionalInt(_ field: String, in range: ClosedRange<Int>) throws(ServiceError) -> Int? {
        switch object[field] {
        case nil, .null?: return nil
        case .int(let value)? where range.contains(value): return value
        default:
            throw Self.invalid(field, "must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
    }

    static func invalid(_ field: String, _ reason: String) -> ServiceError {
        ServiceError(.invalidInput, "\(field) \(reason)", details: [("field", .string(field))])
    }
}
