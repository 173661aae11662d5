public import LogbookApplication
import LogbookDomain
public import LogbookJSON

/// One request document as it arrives on a request socket (ARCHITECTURE §5): a JSON
/// object with a client-chosen `id` and a `type`. Parsing checks only this outer shape;
/// each use case reads the rest of the object itself.
public struct WireRequest: Sendable {
    /// The largest request body accepted, in bytes; bigger ones get `malformed_request`.
    public static let maximumSize = 1 << 20

    public var id: String
    public var type: String
    public var object: JSONObject

    /// Reads a request frame. Fails with `malformed_request` (carrying the id when one
    /// could be read) for bytes that are not a JSON object with a string `id` and `type`.
    public init(frame: [UInt8]) throws(WireRequestError) {
        guard frame.count <= Self.maximumSize else {
            throw WireRequestError(
                id: nil,
                ServiceError(
                    .malformedRequest, "request is \(frame.count) bytes; the limit is \(Self.maximumSize)",
                    details: [("limit", .int(Self.maximumSize))]))
        }
        let value: JSONValue
        do {
            value = try JSONParser.parse(frame)
        } catch {
            throw WireRequestError(id: nil, ServiceError(.malformedRequest, "request is not valid JSON: \(error)"))
        }
        guard case .object(let object) = value else {
            throw WireRequestError(
                id: nil, ServiceError(.malformedRequest, "request must be a JSON object, got \(value.kindDescription)"))
        }
        guard case .string(let id)? = object["id"], !id.isEmpty else {
            throw WireRequestError(
                id: nil,
                ServiceError(
                    .malformedRequest, "request needs an \"id\": a non-empty string the reply echoes",
                    details: [("field", .string("id"))]))
        }
        guard case .string(let type)? = object["type"] else {
            throw WireRequestError(
                id: id,
                ServiceError(
                    .malformedRequest, "request needs a \"type\" string", details: [("field", .string("type"))]))
        }
        self.id = id
        self.type = type
        self.object = object
    }

    /// The fields of a request that carries nothing but its id and type (`Status`, `Rebuild`).
    public static let bareFields: Set<String> = ["id", "type"]

    /// Refuses top-level fields outside `allowed` with `malformed_request`, naming the field.
    public func onlyFields(_ allowed: Set<String>) throws(ServiceError) {
        guard let unknown = object.keys.first(where: { !allowed.contains($0) }) else { return }
        let known = allowed.sorted().joined(separator: ", ")
        throw ServiceError(
            .malformedRequest, "request field '\(unknown)' is not part of a \(type) request (known: \(known))",
            details: [("field", .string(unknown))])
    }
}

/// A request that could not be read: the error to reply with and the id to echo, if any.
public struct WireRequestError: Error, Sendable {
    public var id: String?
    public var error: ServiceError

    public init(id: String?, _ error: ServiceError) {
        self.id = id
        self.error = error
    }
}
