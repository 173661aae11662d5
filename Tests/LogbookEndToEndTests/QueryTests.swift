import LogbookApplication
import LogbookClient
import LogbookJSON
import Testing

/// The query process over the wire (ARCHITECTURE §5, §7): read-your-writes with
/// `minPosition`, `timeout`, every query type with its exact documents, paging, refusals.
@Suite("End to end: queries", .serialized)
struct QueryTests {
    @Test("a query with minPosition waits for that position, then answers with the write included")
    func minPositionWaits() async throws {
        let cluster = try await ServiceCluster.started()
        let client = try cluster.patientClient()
        defer { client.close() }
        let first = try await client.send(type: "AddProduct", data: Fixture.product("first"))
        try await cluster.queryStatus(after: first.position)

        // Asked before the write exists: the query is parked until the read models reach it.
        let waiting = Task {
            try await client.query(
                type: "GetProduct", data: ["productId": "late"], minPosition: first.position + 1,
                timeoutMs: patientQueryMilliseconds)
        }
        let parked = await eventually {
            (try? await client.status(of: .queries))?["queriesWaiting"] == .int(1)
        }
        #expect(parked, "the query was not parked")
        let late = try await client.send(
            type: "AddProduct", data: Fixture.product("late", name: "Late", price: "2.5", stock: 4))
        #expect(late.position == first.position + 1)
        let answer = try await waiting.value
        #expect(answer.position >= late.position)
        let recordedAt = try #require(late.events.first?.envelope["recordedAt"])
        #expect(
            answer.result
                == [
                    "productId": "late", "name": "Late", "price": "2.50", "category": "food", "stock": 4,
                    "isAvailable": true, "updatedAt": recordedAt,
                ])
        #expect(try await client.status(of: .queries)["queriesWaiting"] == .int(0))

        // Asked right after the write (whose last event is an unpublished email claim).
        let registered = try await client.send(type: "RegisterUser", data: Fixture.user("ann"))
        #expect(registered.events.last?.type == "EmailClaimed")
        let user = try await client.query(
            type: "GetUser", data: ["userId": "ann"], minPosition: registered.position,
            timeoutMs: patientQueryMilliseconds)
        #expect(user.position >= registered.position)
        #expect(user.result["userId"] == "ann")

        // The command line waits the same way.
        let restock = try await client.send(type: "RestockProduct", data: ["productId": "late", "quantity": 6])
        let cli = try await cluster.run([
            "query", "GetProduct", #"{"productId":"late"}"#, "--min-position", "\(restock.position)", "--wait-ms",
            "10000",
        ])
        #expect(cli.status == 0, "\(cli.stderr)")
        #expect(try cli.json()["result"]?["stock"] == 10)
    }

    @Test("a minPosition the log never reaches answers timeout, saying how far the read models got")
    func minPositionTimesOut() async throws {
        let cluster = try await ServiceCluster.started()
        let client = try cluster.client()
        defer { client.close() }
        let receipt = try await client.send(type: "AddProduct", data: Fixture.product("p1"))
        try await cluster.queryStatus(after: receipt.position)
        let head = receipt.position

        let reply = await refusal {
            try await client.query(
                type: "GetProduct", data: ["productId": "p1"], minPosition: head + 100, timeoutMs: 300)
        }
        #expect(reply?.code == "timeout")
        #expect(reply?.details == ["minPosition": .int(Int(head + 100)), "position": .int(Int(head))])
        let cli = try await cluster.run([
            "query", "ListUsers", "--min-position", "\(head + 5)", "--wait-ms", "200",
        ])
        #expect(cli.status == 1)
        let printed = try cli.json()
        #expect(printed["ok"] == false)
        #expect(printed["error"]?["code"] == "timeout")
        #expect(printed["error"]?["details"] == ["minPosition": .int(Int(head + 5)), "position": .int(Int(head))])

        // Nothing is left waiting and the process answers as before.
        #expect(try await client.status(of: .queries)["queriesWaiting"] == .int(0))
        let answer = try await client.query(type: "GetProduct", data: ["productId": "p1"], minPosition: head)
        #expect(answer.result["stock"] == 10)
    }

    @Test("every query type answers with the read model's exact document")
    func everyQueryType() async throws {
        let cluster = try await ServiceCluster.started()
        let client = try cluster.client()
        defer { client.close() }
        func send(_ type: String, _ data: JSONObject) async throws -> JSONValue {
            let receipt = try await client.send(type: type, data: data)
            return try #require(receipt.events.first?.envelope["recordedAt"])
        }
        let annAt = try await send(
            "RegisterUser",
            [
                "userId": "ann", "name": "Ann", "email": "Ann@Example.com", "gender": "female",
                "birthday": "1990-04-01", "subscription": "premium",
            ])
        let bobAt = try await send("RegisterUser", Fixture.user("bob", name: "Bob", email: "bob@example.com"))
        _ = try await send("RegisterUser", Fixture.user("carl"))
        _ = try await send("DeleteUser", ["userId": "carl"])
        let bobUpdatedAt = try await send("ChangeSubscription", ["userId": "bob", "subscription": "enterprise"])
        _ = try await send("AddProduct", Fixture.product("tea", name: "Green Tea", price: "3.10", stock: 3))
        _ = try await send(
            "AddProduct", Fixture.product("mug", name: "Mug", price: "7", category: "clothing", stock: 10))
        let phoneAt = try await send(
            "AddProduct", Fixture.product("phone", name: "Phone", price: "499.99", category: "electronics", stock: 0))
        _ = try await send("AddProduct", Fixture.product("old", name: "Old Tea"))
        _ = try await send("RemoveProduct", ["productId": "old"])
        let o1At = try await send("PurchaseProduct", Fixture.purchase("o1", user: "ann", product: "tea", quantity: 2))
        _ = try await send("PurchaseProduct", Fixture.purchase("o2", user: "bob", product: "mug", quantity: 1))
        let o3At = try await send("PurchaseProduct", Fixture.purchase("o3", user: "ann", product: "mug", quantity: 3))
        let mugAt = try await send("UpdateProduct", ["productId": "mug", "price": "8.5"])
        let helloAt = try await send("CreatePost", Fixture.post("hello", author: "ann", title: "Hello", content: "Hi"))
        _ = try await send("CreatePost", Fixture.post("second", author: "ann"))
        let bobsAt = try await send("CreatePost", Fixture.post("bobs", author: "bob", title: "Bob's", content: ""))
        let editedAt = try await send("EditPost", ["postId": "hello", "title": "Hello again"])
        let last = try await client.send(type: "DeletePost", data: ["postId": "second"])
        try await cluster.queryStatus(after: last.position)

        let ann: JSONValue = [
            "userId": "ann", "name": "Ann", "email": "Ann@Example.com", "gender": "female", "birthday": "1990-04-01",
            "subscription": "premium", "canAccessPremiumFeatures": true, "registeredAt": annAt, "updatedAt": annAt,
        ]
        let bob: JSONValue = [
            "userId": "bob", "name": "Bob", "email": "bob@example.com", "gender": "unknown",
            "subscription": "enterprise", "canAccessPremiumFeatures": true, "registeredAt": bobAt,
            "updatedAt": bobUpdatedAt,
        ]
        let tea: JSONValue = [
            "productId": "tea", "name": "Green Tea", "price": "3.10", "category": "food", "stock": 1,
            "isAvailable": true, "updatedAt": o1At,
        ]
        let mug: JSONValue = [
            "productId": "mug", "name": "Mug", "price": "8.50", "category": "clothing", "stock": 6,
            "isAvailable": true, "updatedAt": mugAt,
        ]
        let phone: JSONValue = [
            "productId": "phone", "name": "Phone", "price": "499.99", "category": "electronics", "stock": 0,
            "isAvailable": false, "updatedAt": phoneAt,
        ]
        let o1: JSONValue = [
            "orderId": "o1", "userId": "ann", "productId": "tea", "quantity": 2, "unitPrice": "3.10",
            "totalPrice": "6.20", "status": "pending", "placedAt": o1At,
        ]
        let o3: JSONValue = [
            "orderId": "o3", "userId": "ann", "productId": "mug", "quantity": 3, "unitPrice": "7.00",
            "totalPrice": "21.00", "status": "pending", "placedAt": o3At,
        ]
        let hello: JSONValue = [
            "postId": "hello", "authorId": "ann", "title": "Hello again", "content": "Hi", "createdAt": helloAt,
            "updatedAt": editedAt,
        ]
        let bobs: JSONValue = [
            "postId": "bobs", "authorId": "bob", "title": "Bob's", "content": "", "createdAt": bobsAt,
            "updatedAt": bobsAt,
        ]
        func page(_ items: [JSONValue], page: Int = 1, perPage: Int = 20, total: Int? = nil) -> JSONValue {
            ["items": .array(items), "page": .int(page), "perPage": .int(perPage), "total": .int(total ?? items.count)]
        }
        func answer(_ type: String, _ data: JSONObject) async throws -> JSONValue {
            let answer = try await client.query(type: type, data: data)
            #expect(answer.position == last.position, "\(type)")
            return answer.result
        }

        #expect(try await answer("GetUser", ["userId": "ann"]) == ann)
        #expect(try await answer("GetUser", ["userId": "bob"]) == bob)
        #expect(try await answer("ListUsers", [:]) == page([ann, bob]))
        #expect(try await answer("GetProduct", ["productId": "tea"]) == tea)
        #expect(try await answer("GetProduct", ["productId": "mug"]) == mug)
        #expect(try await answer("GetProduct", ["productId": "phone"]) == phone)
        #expect(try await answer("ListProducts", [:]) == page([tea, mug, phone]))
        #expect(try await answer("ListProducts", ["category": "food"]) == page([tea]))
        #expect(try await answer("ListProducts", ["inStockOnly": true]) == page([tea, mug]))
        #expect(try await answer("ListProducts", ["search": "TEA"]) == page([tea]))
        #expect(try await answer("ListProducts", ["search": "o", "inStockOnly": false]) == page([phone]))
        #expect(try await answer("ListProducts", ["category": "electronics", "inStockOnly": true]) == page([]))
        #expect(try await answer("ListProducts", ["category": nil, "search": nil]) == page([tea, mug, phone]))
        #expect(try await answer("ListOrders", ["userId": "ann"]) == page([o1, o3]))
        #expect(try await answer("ListOrders", ["userId": "nobody"]) == page([]))
        #expect(try await answer("GetPost", ["postId": "hello"]) == hello)
        #expect(try await answer("ListPosts", [:]) == page([hello, bobs]))
        #expect(try await answer("ListPosts", ["authorId": "ann"]) == page([hello]))
        #expect(try await answer("ListPosts", ["authorId": "bob"]) == page([bobs]))

        // Deleted and removed things answer not_found and are in no list.
        for (type, key, id, entity) in [
            ("GetUser", "userId", "carl", "user"), ("GetProduct", "productId", "old", "product"),
            ("GetPost", "postId", "second", "post"), ("GetUser", "userId", "never", "user"),
        ] {
            let reply = await refusal { try await client.query(type: type, data: [key: .string(id)]) }
            #expect(reply?.code == "not_found", "\(type) \(id)")
            #expect(reply?.details == ["entity": .string(entity), "id": .string(id)])
        }

        // The command line prints the same reply document.
        let cli = try await cluster.run(["query", "GetProduct", #"{"productId":"tea"}"#])
        #expect(cli.status == 0, "\(cli.stderr)")
        let reply = try cli.json()
        #expect(reply["ok"] == true && reply["position"] == .int(Int(last.position)) && reply["result"] == tea)
        let missing = try await cluster.run(["query", "GetPost", #"{"postId":"second"}"#])
        #expect(missing.status == 1)
        #expect(try missing.json()["error"]?["code"] == "not_found")
    }

    @Test("lists page from 1 with perPage rows, oldest first, and count the whole list")
    func paging() async throws {
        let cluster = try await ServiceCluster.started()
        let client = try cluster.client()
        defer { client.close() }
        var last: Int64 = 0
        for index in 1...25 {
            let id = "p\(index < 10 ? "0" : "")\(index)"
            last = try await client.send(type: "AddProduct", data: Fixture.product(id, stock: index % 3)).position
        }
        try await cluster.queryStatus(after: last)
        func ids(_ data: JSONObject) async throws -> (ids: [String], page: Int?, perPage: Int?, total: Int?) {
            let result = try await client.query(type: "ListProducts", data: data).result
            let items = result["items"]?.arrayValue ?? []
            return (
                items.compactMap { $0["productId"]?.stringValue }, result["page"]?.intValue,
                result["perPage"]?.intValue, result["total"]?.intValue
            )
        }
        let all = (1...25).map { "p\($0 < 10 ? "0" : "")\($0)" }
        let first = try await ids(["perPage": 10])
        #expect(first.ids == Array(all[0..<10]) && first.page == 1 && first.perPage == 10 && first.total == 25)
        let second = try await ids(["page": 2, "perPage": 10])
        #expect(second.ids == Array(all[10..<20]) && second.page == 2 && second.total == 25)
        let third = try await ids(["page": 3, "perPage": 10])
        #expect(third.ids == Array(all[20..<25]) && third.page == 3 && third.total == 25)
        let beyond = try await ids(["page": 4, "perPage": 10])
        #expect(beyond.ids == [] && beyond.page == 4 && beyond.total == 25)
        let byDefault = try await ids([:])
        #expect(byDefault.ids == Array(all[0..<20]) && byDefault.page == 1 && byDefault.perPage == 20)
        let whole = try await ids(["perPage": 100])
        #expect(whole.ids == all && whole.perPage == 100)
        // A filter pages through its own rows and counts only them.
        let inStock = all.enumerated().filter { ($0.offset + 1) % 3 != 0 }.map(\.element)
        let filtered = try await ids(["inStockOnly": true, "page": 2, "perPage": 7])
        #expect(filtered.ids == Array(inStock[7..<14]) && filtered.total == inStock.count)
    }

    @Test("an unknown query type answers unknown_type, naming it")
    func unknownType() async throws {
        let cluster = try await ServiceCluster.started()
        let client = try cluster.client()
        defer { client.close() }
        for type in ["GetUsers", "ReadLog", "AddProduct", "", "getuser"] {
            let refusal = WireRefusal(
                try await client.request(.queries, ["id": "q1", "type": .string(type), "data": [:]]))
            #expect(refusal.id == "q1")
            #expect(refusal.code == "unknown_type", "\(type)")
            #expect(refusal.details?["type"] == .string(type))
        }
        let cli = try await cluster.run(["query", "Teleport"])
        #expect(cli.status == 1)
        #expect(try cli.json()["error"]?["code"] == "unknown_type")
    }

    static let badQueries: [(type: String, data: JSONValue, field: String)] = [
        ("GetUser", [:], "userId"),
        ("GetUser", ["userId": 5], "userId"),
        ("GetUser", ["userId": "not an id!"], "userId"),
        ("GetUser", ["userId": "u1", "extra": 1], "extra"),
        ("GetUser", "u1", "data"),
        ("GetUser", [1, 2], "data"),
        ("GetPost", ["postId": ""], "postId"),
        ("GetProduct", ["productId": .string(String(repeating: "x", count: 65))], "productId"),
        ("ListUsers", ["page": 0], "page"),
        ("ListUsers", ["page": .double(1.5)], "page"),
        ("ListUsers", ["page": "2"], "page"),
        ("ListUsers", ["perPage": 0], "perPage"),
        ("ListUsers", ["perPage": 101], "perPage"),
        ("ListPosts", ["authorId": true], "authorId"),
        ("ListProducts", ["category": "toys"], "category"),
        ("ListProducts", ["inStockOnly": "yes"], "inStockOnly"),
        ("ListProducts", ["search": .string(String(repeating: "a", count: 201))], "search"),
        ("ListProducts", ["sort": "price"], "sort"),
        ("ListOrders", [:], "userId"),
        ("ListOrders", ["userId": nil], "userId"),
    ]

    @Test("bad query data answers invalid_input naming the field; bad envelopes too")
    func badData() async throws {
        let cluster = try await ServiceCluster.started()
        let client = try cluster.client()
        defer { client.close() }
        for (type, data, field) in Self.badQueries {
            let refusal = WireRefusal(
                try await client.request(.queries, ["id": "q2", "type": .string(type), "data": data]))
            #expect(refusal.id == "q2")
            #expect(refusal.code == "invalid_input", "\(type) \(JSONWriter.string(data))")
            #expect(refusal.details?["field"] == .string(field), "\(type) \(JSONWriter.string(data))")
        }
        let envelopes: [(JSONObject, String, String)] = [
            (["minPosition": -1], "invalid_input", "minPosition"),
            (["minPosition": "5"], "invalid_input", "minPosition"),
            (["timeoutMs": 0], "invalid_input", "timeoutMs"),
            (["timeoutMs": 60_001], "invalid_input", "timeoutMs"),
            (["timeoutMs": .double(2.5)], "invalid_input", "timeoutMs"),
            (["bogus": 1], "malformed_request", "bogus"),
        ]
        for (extra, code, field) in envelopes {
            var document: JSONObject = ["id": "q3", "type": "ListUsers", "data": [:]]
            for (key, value) in extra { document[key] = value }
            let refusal = WireRefusal(try await client.request(.queries, document))
            #expect(refusal.id == "q3")
            #expect(refusal.code == code, "\(field)")
            #expect(refusal.details?["field"] == .string(field))
        }
        // Still serving.
        #expect(try await client.query(type: "ListUsers").result["total"] == 0)
        #expect(cluster.errorLines(of: "query").isEmpty)
    }
}
