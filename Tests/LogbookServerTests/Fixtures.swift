import LogbookJSON

/// Requests of the wire contract the in-process tests send.
enum Fixture {
    static func command(_ id: String, _ type: String, _ data: JSONValue) -> JSONValue {
        ["id": .string(id), "type": .string(type), "data": data]
    }

    static func registerUser(_ id: String, commandId: String) -> JSONValue {
        command(
            commandId, "RegisterUser",
            ["userId": .string(id), "name": "Ann", "email": .string("\(id)@example.com")])
    }

    static func addProduct(_ id: String, commandId: String) -> JSONValue {
        command(
            commandId, "AddProduct",
            ["productId": .string(id), "name": "Tea", "price": "1.00", "category": "food", "stock": 5])
    }

    /// `GetUser`, waiting for `minPosition` at most `timeoutMs` when given.
    static func getUser(_ id: String, queryId: String, minPosition: Int? = nil, timeoutMs: Int? = nil) -> JSONValue {
        var request: JSONObject = ["id": .string(queryId), "type": "GetUser", "data": ["userId": .string(id)]]
        if let minPosition { request["minPosition"] = .int(minPosition) }
        if let timeoutMs { request["timeoutMs"] = .int(timeoutMs) }
        return .object(request)
    }

    static func getProduct(_ id: String, queryId: String) -> JSONValue {
        ["id": .string(queryId), "type": "GetProduct", "data": ["productId": .string(id)]]
    }

    static func rebuild(_ id: String) -> JSONValue { ["id": .string(id), "type": "Rebuild"] }
}
