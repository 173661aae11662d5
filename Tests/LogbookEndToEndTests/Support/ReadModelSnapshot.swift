import LogbookApplication
import LogbookClient
import LogbookJSON
import Testing

/// Everything the query process answers, read through its lists page by page: every user,
/// post and product, and every live user's orders. Two snapshots are equal exactly when the
/// read models answer the same.
struct ReadModelSnapshot: Equatable {
    var users: [JSONValue] = []
    var posts: [JSONValue] = []
    var products: [JSONValue] = []
    var orders: [String: [JSONValue]] = [:]

    /// Reads every list of `cluster`'s query process, at or after `position`.
    static func read(of cluster: ServiceCluster, after position: Int64) async throws -> ReadModelSnapshot {
        let client = try cluster.patientClient()
        defer { client.close() }
        var snapshot = ReadModelSnapshot()
        snapshot.users = try await list(client, "ListUsers", [:], after: position)
        snapshot.posts = try await list(client, "ListPosts", [:], after: position)
        snapshot.products = try await list(client, "ListProducts", [:], after: position)
        for user in snapshot.users {
            let id = try #require(user["userId"]?.stringValue)
            let orders = try await list(client, "ListOrders", ["userId": .string(id)], after: position)
            if !orders.isEmpty { snapshot.orders[id] = orders }
        }
        return snapshot
    }

    private static func list(_ client: LogbookClient, _ type: String, _ data: JSONObject, after position: Int64)
        async throws -> [JSONValue]
    {
        var items: [JSONValue] = []
        var page = 1
        while true {
            var request = data
            request["page"] = .int(page)
            request["perPage"] = 100
            let result = try await client.query(
                type: type, data: request, minPosition: position, timeoutMs: patientQueryMilliseconds
            )
            .result
            let rows = result["items"]?.arrayValue ?? []
            items += rows
            let total = try #require(result["total"]?.intValue)
            if rows.isEmpty || items.count >= total {
                #expect(items.count == total, "\(type): \(items.count) rows listed, total says \(total)")
                return items
            }
            page += 1
        }
    }
}

/// What the read models must hold after applying `log`, counted from the events themselves.
func expectedCounts(_ log: [RecordedEvent]) -> JSONValue {
    func count(_ type: String) -> Int { log.count { $0.type == type } }
    return [
        "users": .int(count("UserRegistered") - count("UserDeleted")),
        "posts": .int(count("PostCreated") - count("PostDeleted")),
        "products": .int(count("ProductAdded") - count("ProductRemoved")),
        "orders": .int(count("OrderPlaced")),
    ]
}
