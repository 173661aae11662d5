public import LogbookApplication
import LogbookDomain
import LogbookJSON

extension CommandRequest {
    static let wireFields: Set<String> = ["id", "type", "data", "expectedVersion", "metadata"]

    /// A command from its wire document `{"id","type","data","expectedVersion"?,"metadata"?}`;
    /// `metadata` may hold `correlationId` and `causationId` strings.
    public init(wire request: WireRequest) throws(ServiceError) {
        try request.onlyFields(Self.wireFields)
        let expected = try ExpectedVersion(json: request.object["expectedVersion"])
        var correlationId: String?
        var causationId: String?
        switch request.object["metadata"] {
        case nil, .null?:
            break
        case .object(let metadata)?:
            for (key, value) in metadata {
                guard key == "correlationId" || key == "causationId" else {
                    throw ServiceError(
                        .malformedRequest, "metadata.\(key) is not known (known: causationId, correlationId)",
                        details: [("field", .string("metadata.\(key)"))])
                }
                guard case .string(let text) = value else {
                    throw ServiceError(
                        .malformedRequest, "metadata.\(key) must be a string",
                        details: [("field", .string("metadata.\(key)"))])
                }
                if key == "correlationId" { correlationId = text } else { causationId = text }
            }
        case let other?:
            throw ServiceError(
                .malformedRequest, "metadata must be an object, got \(other.kindDescription)",
                details: [("field", .string("metadata"))])
        }
        self.init(
            commandId: request.id, type: request.type, data: request.object["data"] ?? .null,
            expectedVersion: expected, correlationId: correlationId, causationId: causationId)
    }
}
