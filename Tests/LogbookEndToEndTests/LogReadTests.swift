import LogbookApplication
import LogbookClient
import LogbookJSON
import LogbookWire
import Testing

/// `ReadLog` on the worker's log socket and `logbook replay` (ARCHITECTURE §5, §6): positions
/// without holes in commit order, `next` and `head`, `limit`, `topics`, paging, and refusals.
@Suite("End to end: reading the log", .serialized)
struct LogReadTests {
    /// Sends `count` products from `clients` clients at once (pipelined), returns the receipts.
    static func sendConcurrently(_ cluster: ServiceCluster, clients: Int, each count: Int, prefix: String)
        async throws -> [String: CommandReceipt]
    {
        try await withThrowingTaskGroup(of: [String: CommandReceipt].self) { group in
            for worker in 0..<clients {
                group.addTask {
                    let client = try cluster.client()
                    defer { client.close() }
                    return try await withThrowingTaskGroup(of: (String, CommandReceipt).self) { inner in
                        for index in 0..<count {
                            let id = "\(prefix)-\(worker)-\(index)"
                            inner.addTask {
                                (
                                    id,
                                    try await client.send(type: "AddProduct", data: Fixture.product(id), commandId: id)
                                )
                            }
                        }
                        var receipts: [String: CommandReceipt] = [:]
                        for try await (id, receipt) in inner { receipts[id] = receipt }
                        return receipts
                    }
                }
            }
            var all: [String: CommandReceipt] = [:]
            for try await part in group { all.merge(part) { first, _ in first } }
            return all
        }
    }

    @Test("positions run 1…n without holes in commit order, and each stream's versions 1…k")
    func positions() async throws {
        let cluster = try await ServiceCluster.started()
        let client = try cluster.client()
        defer { client.close() }
        var receipts: [CommandReceipt] = []
        receipts.append(try await client.send(type: "RegisterUser", data: Fixture.user("ann")))
        receipts.append(try await client.send(type: "AddProduct", data: Fixture.product("tea", stock: 5)))
        receipts.append(
            try await client.send(type: "PurchaseProduct", data: Fixture.purchase("o1", user: "ann", product: "tea")))
        receipts.append(try await client.send(type: "CreatePost", data: Fixture.post("hello", author: "ann")))
        receipts.append(try await client.send(type: "RestockProduct", data: ["productId": "tea", "quantity": 3]))
        receipts.append(try await client.send(type: "UpdateUserProfile", data: ["userId": "ann", "email": "a@b.co"]))

        let log = try await cluster.wholeLog()
        #expect(log.map(\.position) == Array(1...Int64(log.count)))
        // One client, one command at a time: commit order is sending order.
        #expect(log.map(\.envelope) == receipts.flatMap(\.events).map(\.envelope))
        for receipt in receipts { #expect(receipt.position == receipt.events.last?.position) }
        for stream in Set(log.map(\.stream)) {
            let versions = log.filter { $0.stream == stream }.map(\.version)
            #expect(versions == Array(1...versions.count), "versions of \(stream)")
        }

        // Many clients at once: still 1…n, and each reply names the events the log holds there.
        let concurrent = try await Self.sendConcurrently(cluster, clients: 4, each: 25, prefix: "c")
        let after = try await cluster.wholeLog()
        #expect(after.count == log.count + 100)
        #expect(after.map(\.position) == Array(1...Int64(after.count)))
        for (id, receipt) in concurrent {
            let event = try #require(receipt.events.first)
            #expect(receipt.events.count == 1)
            #expect(after[Int(event.position) - 1].envelope == event.envelope, "\(id)")
            #expect(event.metadata.commandId == id)
        }
    }

    @Test("next and head: a page says where to read on, a read at or past the head is empty")
    func nextAndHead() async throws {
        let cluster = try await ServiceCluster.started()
        let client = try cluster.client()
        defer { client.close() }
        _ = try await client.send(type: "RegisterUser", data: Fixture.user("ann"))  // 1, 2 (email)
        for index in 1...4 { _ = try await client.send(type: "AddProduct", data: Fixture.product("p\(index)")) }  // 3…6
        _ = try await client.send(type: "RegisterUser", data: Fixture.user("bob"))  // 7, 8
        _ = try await client.send(
            type: "PurchaseProduct", data: Fixture.purchase("o1", user: "bob", product: "p1"))  // 9, 10
        let n: Int64 = 10

        func read(_ from: Int64, limit: Int? = nil, topics: [String]? = nil) async throws -> ([Int64], Int64, Int64) {
            let page = try await client.readLog(from: from, limit: limit, topics: topics)
            return (page.events.map(\.position), page.next, page.head)
        }
        #expect(try await read(1) == (Array(1...n), n + 1, n))
        #expect(try await read(1, limit: 3) == ([1, 2, 3], 4, n))
        #expect(try await read(4, limit: 3) == ([4, 5, 6], 7, n))
        #expect(try await read(n - 1, limit: 2) == ([n - 1, n], n + 1, n))
        #expect(try await read(n, limit: 5) == ([n], n + 1, n))
        #expect(try await read(n + 1) == ([], n + 1, n))
        #expect(try await read(n + 50, limit: 1) == ([], n + 50, n))
        #expect(try await read(1, limit: 10_000) == (Array(1...n), n + 1, n))

        // Topics: only their events; a short page jumps `next` past the head.
        #expect(try await read(1, topics: ["products"]) == ([3, 4, 5, 6, 9], n + 1, n))
        #expect(try await read(1, limit: 2, topics: ["products"]) == ([3, 4], 5, n))
        #expect(try await read(5, limit: 2, topics: ["products"]) == ([5, 6], 7, n))
        #expect(try await read(7, limit: 2, topics: ["products"]) == ([9], n + 1, n))
        #expect(try await read(1, topics: ["users", "orders"]) == ([1, 7, 10], n + 1, n))
        #expect(try await read(1, topics: ["posts"]) == ([], n + 1, n))
        #expect(try await read(1, topics: []) == ([], n + 1, n))
        #expect(
            try await read(1, topics: ["users", "posts", "products", "orders"]) == (
                [1, 3, 4, 5, 6, 7, 9, 10], n + 1, n
            ))
    }

    @Test("paging through the whole log with any page size and topics reproduces the log")
    func paging() async throws {
        let cluster = try await ServiceCluster.started()
        let client = try cluster.client()
        defer { client.close() }
        _ = try await Self.sendConcurrently(cluster, clients: 2, each: 520, prefix: "p")
        _ = try await client.send(type: "RegisterUser", data: Fixture.user("ann"))
        for index in 0..<5 {
            _ = try await client.send(
                type: "PurchaseProduct", data: Fixture.purchase("o\(index)", user: "ann", product: "p-0-\(index)"))
        }
        let n: Int64 = 1_040 + 2 + 10
        let all = try await client.readLog(from: 1, limit: 10_000)
        #expect(all.events.map(\.position) == Array(1...n))
        #expect(all.next == n + 1 && all.head == n)

        // Without a limit a page holds 1,000 events.
        let first = try await client.readLog(from: 1)
        #expect(first.events.count == 1_000 && first.next == 1_001 && first.head == n)

        for pageSize in [1_000, 333, 29] {
            #expect(try await cluster.wholeLog(pageSize: pageSize).map(\.envelope) == all.events.map(\.envelope))
        }
        for (topics, pageSizes) in [
            (["orders"], [1, 2, 500]), (["users", "orders"], [3, 1_000]), (["products"], [97, 500]),
        ] {
            let categories = Set(topics.map { FeedTopic(rawValue: $0)!.category })
            let expected = all.events.filter { categories.contains($0.category) }.map(\.envelope)
            for pageSize in pageSizes {
                let paged = try await cluster.wholeLog(pageSize: pageSize, topics: topics).map(\.envelope)
                #expect(paged == expected, "\(topics) by \(pageSize)")
            }
        }
    }

    static let badRequests: [(request: String, code: String, field: String?)] = [
        (#"{"id":"r1","type":"ReadLog","from":0}"#, "invalid_input", "from"),
        (#"{"id":"r1","type":"ReadLog","from":-3}"#, "invalid_input", "from"),
        (#"{"id":"r1","type":"ReadLog","from":"1"}"#, "invalid_input", "from"),
        (#"{"id":"r1","type":"ReadLog","from":1.5}"#, "invalid_input", "from"),
        (#"{"id":"r1","type":"ReadLog"}"#, "invalid_input", "from"),
        (#"{"id":"r1","type":"ReadLog","from":null}"#, "invalid_input", "from"),
        (#"{"id":"r1","type":"ReadLog","from":1,"limit":0}"#, "invalid_input", "limit"),
        (#"{"id":"r1","type":"ReadLog","from":1,"limit":10001}"#, "invalid_input", "limit"),
        (#"{"id":"r1","type":"ReadLog","from":1,"limit":"5"}"#, "invalid_input", "limit"),
        (#"{"id":"r1","type":"ReadLog","from":1,"topics":["toys"]}"#, "invalid_input", "topics"),
        (#"{"id":"r1","type":"ReadLog","from":1,"topics":["users","email"]}"#, "invalid_input", "topics"),
        (#"{"id":"r1","type":"ReadLog","from":1,"topics":"users"}"#, "invalid_input", "topics"),
        (#"{"id":"r1","type":"ReadLog","from":1,"topics":[1]}"#, "invalid_input", "topics"),
        (#"{"id":"r1","type":"ReadLog","from":1,"bogus":true}"#, "malformed_request", "bogus"),
        (#"{"id":"r1","type":"ReadLogs","from":1}"#, "unknown_type", nil),
        (#"{"id":"r1","type":"AddProduct","from":1}"#, "unknown_type", nil),
    ]

    @Test("bad ReadLog requests are refused with the right code and field, and the log is untouched")
    func badRequests() async throws {
        let cluster = try await ServiceCluster.started()
        let client = try cluster.client()
        defer { client.close() }
        _ = try await client.send(type: "AddProduct", data: Fixture.product("p1"))
        for (request, code, field) in Self.badRequests {
            let document = try #require(try JSONParser.parse(request).objectValue)
            let refusal = WireRefusal(try await client.request(.log, document))
            #expect(refusal.id == "r1", "\(request)")
            #expect(refusal.code == code, "\(request)")
            if let field {
                #expect(refusal.details?["field"] == .string(field), "\(request)")
            } else {
                #expect(refusal.details?["type"] == document["type"], "\(request)")
            }
        }
        let page = try await client.readLog(from: 1)
        #expect(page.events.map(\.position) == [1] && page.head == 1)
        #expect(cluster.errorLines(of: "worker").isEmpty)
    }

    @Test("logbook replay prints the asked-for events as JSON lines, as ReadLog returns them")
    func replay() async throws {
        let cluster = try await ServiceCluster.started()
        let client = try cluster.client()
        defer { client.close() }
        try await FeedTests.sendMixedTraffic(client, round: 5, count: 6)
        let log = try await cluster.wholeLog()
        let n = log.count

        func replayed(_ arguments: [String]) async throws -> [JSONValue] {
            let result = try await cluster.run(["replay"] + arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            #expect(result.stderr.isEmpty)
            return try result.jsonLines().map { .object($0) }
        }
        #expect(try await replayed([]) == log.map(\.envelope))
        #expect(try await replayed(["--from", "3", "--limit", "4"]) == log[2..<6].map(\.envelope))
        #expect(try await replayed(["--from", "\(n)"]) == [log[n - 1].envelope])
        #expect(try await replayed(["--from", "\(n + 1)"]) == [])
        #expect(
            try await replayed(["--topics", "products"]) == log.filter { $0.category == "product" }.map(\.envelope))
        let productsAndOrders = log.filter { ($0.category == "product" || $0.category == "order") && $0.position >= 5 }
        #expect(
            try await replayed(["--from", "5", "--limit", "3", "--topics", "products,orders"])
                == productsAndOrders.prefix(3).map(\.envelope))
        #expect(
            try await replayed(["--topics", "users", "--limit", "2"])
                == log.filter { $0.category == "user" }.prefix(2).map(\.envelope))
        #expect(try await replayed(["--topics", "all"]) == log.filter { $0.topic != nil }.map(\.envelope))
    }
}
