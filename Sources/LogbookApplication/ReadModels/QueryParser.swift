import LogbookDomain
public import LogbookJSON

/// Turns a query's wire `type` and `data` into a `Query` with valid values. Unknown types
/// answer `unknown_type` (naming the known ones); a `data` that is not an object, an
/// unknown field, a missing or ill-typed field or a value out of range answers
/// `invalid_input` with `details.field`. `null` reads as absent.
public enum QueryParser {
    /// Every query type the service answers, as spelled on the wire.
    public static let queryTypes: [String] = [
        "GetUser", "ListUsers", "GetPost", "ListPosts", "GetProduct", "ListProducts", "ListOrders",
    ]

    /// The longest `search` accepted, in characters (a product name has at most 200).
    public static let maximumSearchLength = 200

    public static func parse(type: String, data: JSONValue) throws(ServiceError) -> Query {
        let query: Query?
        do {
            query = try parseValidated(type: type, data: data)
        } catch {
            throw ServiceError(error)
        }
        guard let query else {
            let known = queryTypes.joined(separator: ", ")
            throw ServiceError(
                .unknownType, "unknown query type '\(type)' (known: \(known))", details: [("type", .string(type))])
        }
        return query
    }

    /// The query, or nil when `type` names no query.
    private static func parseValidated(type: String, data: JSONValue) throws(DomainError) -> Query? {
        switch type {
        case "GetUser":
            let f = try FieldReader(data, allowed: ["userId"])
            return .getUser(try f.value("userId", UserId.init))
        case "ListUsers":
            let f = try FieldReader(data, allowed: ["page", "perPage"])
            return .listUsers(try pageRequest(f))
        case "GetPost":
            let f = try FieldReader(data, allowed: ["postId"])
            return .getPost(try f.value("postId", PostId.init))
        case "ListPosts":
            let f = try FieldReader(data, allowed: ["authorId", "page", "perPage"])
            return .listPosts(authorId: try f.optionalValue("authorId", UserId.init), try pageRequest(f))
        case "GetProduct":
            let f = try FieldReader(data, allowed: ["productId"])
            return .getProduct(try f.value("productId", ProductId.init))
        case "ListProducts":
            let f = try FieldReader(data, allowed: ["category", "inStockOnly", "search", "page", "perPage"])
            let filter = ProductFilter(
                category: try f.optionalValue("category", ProductCategory.parse),
                inStockOnly: try optionalBool(f, "inStockOnly") ?? false,
                search: try f.optionalValue("search", search))
            return .listProducts(filter, try pageRequest(f))
        case "ListOrders":
            let f = try FieldReader(data, allowed: ["userId", "page", "perPage"])
            return .listOrders(userId: try f.value("userId", UserId.init), try pageRequest(f))
        default:
            return nil
        }
    }

    private static func pageRequest(_ f: FieldReader) throws(DomainError) -> PageRequest {
        try PageRequest(
            page: try f.optionalInt("page") ?? 1, perPage: try f.optionalInt("perPage") ?? PageRequest.defaultPerPage)
    }

    private static func optionalBool(_ f: FieldReader, _ key: String) throws(DomainError) -> Bool? {
        switch f.object[key] {
        case nil, .null?: return nil
        case .bool(let value)?: return value
        case let other?: throw .invalidInput(field: key, reason: "must be a boolean, got \(other.kindDescription)")
        }
    }

    /// A search text: any string of at most `maximumSearchLength` characters (four UTF-8
    /// bytes each); a longer one could never match a product name.
    private static func search(_ raw: String, field: String) throws(DomainError) -> String {
        guard raw.utf8.count <= maximumSearchLength * 4, raw.count <= maximumSearchLength else {
            throw .invalidInput(field: field, reason: "must be at most \(maximumSearchLength) characters")
        }
        return raw
    }
}
