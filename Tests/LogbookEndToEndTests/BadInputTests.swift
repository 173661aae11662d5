import Foundation
import LogbookApplication
import LogbookClient
import LogbookJSON
import LogbookTestSupport
import LogbookWire
import LogbookZMQ
import Testing

/// Bad input of every shape on the three request sockets (ARCHITECTURE §8): each message
/// gets an error reply with the right code, the id when it could be read (null otherwise),
/// the server keeps serving, and the log is untouched. Raw DEALER and REQ sockets send what
/// the client library never would; each lives on the one thread that made it.
@Suite("End to end: bad input", .serialized)
struct BadInputTests {
    /// One bad message, as a DEALER sends it, and the refusal it must get.
    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var frames: [[UInt8]]
        var code: String
        var id: JSONValue = .null
        var details: JSONObject?
        var overREQ = false

        var description: String { name }
    }

    /// A server socket and what a request of it looks like.
    struct Target: Sendable {
        var server: ServerEndpoint
        var endpoint: String
        /// A valid request of this socket, as a JSON object with id `id`.
        var valid: @Sendable (String) -> JSONObject
        /// Requests with a field of the wrong type, and the field the refusal must name.
        var wrongTypes: [(JSONObject, String)]
        /// The code an unknown top-level field gets.
        var extraFieldCode = "malformed_request"
    }

    static func commands(_ cluster: ServiceCluster) -> Target {
        let product = Fixture.product("bad")
        var stockAsText = product
        stockAsText["stock"] = "3"
        var priceAsNumber = product
        priceAsNumber["price"] = .double(2.5)
        var badId = product
        badId["productId"] = "no spaces allowed"
        return Target(
            server: .commands, endpoint: cluster.commands,
            valid: { id in ["id": .string(id), "type": "AddProduct", "data": .object(product)] },
            wrongTypes: [
                (["id": "w1", "type": "AddProduct", "data": .object(stockAsText)], "stock"),
                (["id": "w2", "type": "AddProduct", "data": .object(priceAsNumber)], "price"),
                (["id": "w3", "type": "AddProduct", "data": .object(badId)], "productId"),
                (["id": "w4", "type": "AddProduct", "data": "p1"], "data"),
                (["id": "w5", "type": "AddProduct"], "data"),
                (
                    ["id": "w6", "type": "AddProduct", "data": .object(product), "expectedVersion": "soon"],
                    "expectedVersion"
                ),
                (
                    ["id": "w7", "type": "AddProduct", "data": .object(product), "expectedVersion": -1],
                    "expectedVersion"
                ),
                (["id": "w8", "type": "DeleteUser", "data": ["userId": ["u1"]]], "userId"),
            ])
    }

    static func queries(_ cluster: ServiceCluster) -> Target {
        Target(
            server: .queries, endpoint: cluster.queries,
            valid: { id in ["id": .string(id), "type": "ListProducts", "data": [:]] },
            wrongTypes: [
                (["id": "w1", "type": "GetUser", "data": ["userId": 5]], "userId"),
                (["id": "w2", "type": "ListProducts", "data": ["inStockOnly": 1]], "inStockOnly"),
                (["id": "w3", "type": "ListUsers", "data": [:], "minPosition": "1"], "minPosition"),
                (["id": "w4", "type": "ListUsers", "data": [:], "timeoutMs": true], "timeoutMs"),
                (["id": "w5", "type": "GetProduct", "data": "p1"], "data"),
            ])
    }

    static func log(_ cluster: ServiceCluster) -> Target {
        Target(
            server: .log, endpoint: cluster.log,
            valid: { id in ["id": .string(id), "type": "ReadLog", "from": 1] },
            wrongTypes: [
                (["id": "w1", "type": "ReadLog", "from": "1"], "from"),
                (["id": "w2", "type": "ReadLog", "from": 1, "limit": [10]], "limit"),
                (["id": "w3", "type": "ReadLog", "from": 1, "topics": "users"], "topics"),
            ])
    }

    /// The bad messages every request socket must refuse.
    static func cases(for target: Target) -> [Case] {
        let valid = target.valid("v1")
        func json(_ object: JSONObject) -> [UInt8] { bytes(.object(object)) }
        func with(_ changes: [(String, JSONValue?)], id: String? = nil) -> [UInt8] {
            var object = target.valid(id ?? "v1")
            for (key, value) in changes { object[key] = value }
            return json(object)
        }
        let field = { (name: String) -> JSONObject in ["field": .string(name)] }
        var nested = "0"
        for _ in 0..<100 { nested = "[\(nested)]" }
        let invalidUTF8 = bytes(#"{"id":"u1","type":"X","data":{"name":""#) + [0xFF, 0xFE, 0x41] + bytes(#""}}"#)
        let invalidUTF8InId = bytes(#"{"id":""#) + [0xC3, 0x28] + bytes(#"","type":"X"}"#)
        let overlong = bytes(#"{"id":""#) + [0xC0, 0xAF] + bytes(#"","type":"X"}"#)
        let surrogate = bytes(#"{"id":"s1","type":"X","data":{"t":""#) + [0xED, 0xA0, 0x80] + bytes(#""}}"#)
        var cases: [Case] = [
            Case(name: "malformed JSON", frames: [[], bytes(#"{"id":"m1","type":"#)], code: "malformed_request"),
            Case(name: "not JSON at all", frames: [[], bytes("hello there")], code: "malformed_request"),
            Case(name: "an array", frames: [[], bytes(#"[{"id":"a1","type":"X"}]"#)], code: "malformed_request"),
            Case(name: "a string", frames: [[], bytes(#""AddProduct""#)], code: "malformed_request"),
            Case(name: "a number", frames: [[], bytes("42")], code: "malformed_request"),
            Case(name: "null", frames: [[], bytes("null")], code: "malformed_request"),
            Case(name: "an empty frame", frames: [[], []], code: "malformed_request"),
            Case(name: "trailing garbage", frames: [[], json(valid) + bytes(" x")], code: "malformed_request"),
            Case(name: "two documents", frames: [[], json(valid) + json(valid)], code: "malformed_request"),
            Case(
                name: "duplicate keys",
                frames: [[], bytes(#"{"id":"d1","id":"d2","type":"X","data":{}}"#)], code: "malformed_request"),
            Case(
                name: "nesting beyond the limit", frames: [[], bytes(#"{"id":"n1","type":"X","data":\#(nested)}"#)],
                code: "malformed_request"),
            Case(
                name: "an object without id", frames: [[], with([("id", nil)])], code: "malformed_request",
                details: field("id")),
            Case(
                name: "an id that is a number", frames: [[], with([("id", 7)])], code: "malformed_request",
                details: field("id")),
            Case(
                name: "an empty id", frames: [[], with([("id", "")])], code: "malformed_request",
                details: field("id")),
            Case(
                name: "an id that is null", frames: [[], with([("id", .null)])], code: "malformed_request",
                details: field("id")),
            Case(
                name: "no type", frames: [[], with([("type", nil)], id: "t1")], code: "malformed_request",
                id: "t1", details: field("type")),
            Case(
                name: "a type that is not a string", frames: [[], with([("type", 5)], id: "t2")],
                code: "malformed_request", id: "t2", details: field("type")),
            Case(
                name: "an unknown top-level field", frames: [[], with([("bogus", 1)], id: "t3")],
                code: target.extraFieldCode, id: "t3", details: field("bogus")),
            Case(
                name: "an unknown type", frames: [[], with([("type", "Teleport")], id: "t4")], code: "unknown_type",
                id: "t4", details: ["type": "Teleport"]),
            Case(name: "a DEALER without the empty delimiter", frames: [json(valid)], code: "malformed_request"),
            Case(name: "two JSON frames", frames: [[], json(valid), json(valid)], code: "malformed_request"),
            Case(name: "a delimiter and nothing else", frames: [[]], code: "malformed_request"),
            Case(name: "invalid UTF-8 in a string", frames: [[], invalidUTF8], code: "malformed_request"),
            Case(name: "invalid UTF-8 in the id", frames: [[], invalidUTF8InId], code: "malformed_request"),
            Case(name: "an overlong UTF-8 encoding", frames: [[], overlong], code: "malformed_request"),
            Case(name: "an encoded surrogate", frames: [[], surrogate], code: "malformed_request"),
            Case(
                name: "malformed JSON over REQ", frames: [bytes("{nope")], code: "malformed_request", overREQ: true),
            Case(
                name: "an unknown type over REQ", frames: [with([("type", "Teleport")], id: "t5")],
                code: "unknown_type", id: "t5", details: ["type": "Teleport"], overREQ: true),
        ]
        for (index, (object, name)) in target.wrongTypes.enumerated() {
            cases.append(
                Case(
                    name: "wrong type \(index): \(name)", frames: [[], json(object)], code: "invalid_input",
                    id: object["id"] ?? .null, details: field(name)))
        }
        return cases
    }

    /// Sends each case on its own socket (a refused message never poisons the next) and
    /// checks the refusal; returns the number of refusals checked.
    static func check(_ cases: [Case], at endpoint: String) async throws -> Int {
        let replies = try await offThePool { () throws -> [RawReply] in
            let context = try ZMQContext()
            var replies: [RawReply] = []
            for item in cases {
                let connection = try RawConnection(context, item.overREQ ? .request : .dealer, to: endpoint)
                try connection.send(item.frames)
                replies.append(RawReply(frames: try connection.receive(), overREQ: item.overREQ))
            }
            return replies
        }
        var checked = 0
        for (item, raw) in zip(cases, replies) {
            let reply = raw.document("\(item)")
            #expect(reply?.keys == ["id", "ok", "error"], "\(item)")
            let refusal = WireRefusal(reply)
            #expect(refusal.id == item.id, "\(item): \(refusal)")
            #expect(refusal.code == item.code, "\(item): \(refusal)")
            if let details = item.details {
                #expect(refusal.details == details, "\(item)")
            }
            checked += 1
        }
        return checked
    }

    /// The log's head, the worker's verdict on its log, and a valid request still served.
    static func expectIntact(_ cluster: ServiceCluster, head: Int64, valid target: Target) async throws {
        #expect(try await cluster.head() == head, "the log changed")
        let verify = try await runLogbook(["verify", "--data-dir", cluster.workerDataDirectory])
        #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
        #expect(try verify.json() == ["ok": true, "events": .int(Int(head))])
        let client = try cluster.client()
        defer { client.close() }
        let reply = try await client.request(target.server, target.valid("after"))
        #expect(reply["ok"] == true, "\(JSONWriter.string(.object(reply)))")
        #expect(reply["id"] == "after")
        #expect(cluster.errorLines(of: "worker").isEmpty, "\(cluster.stderr(of: "worker"))")
        #expect(cluster.errorLines(of: "query").isEmpty, "\(cluster.stderr(of: "query"))")
    }

    /// A started cluster with a few events in its log.
    static func seeded() async throws -> (ServiceCluster, Int64) {
        let cluster = try await ServiceCluster.started()
        let client = try cluster.client()
        defer { client.close() }
        _ = try await client.send(type: "RegisterUser", data: Fixture.user("ann"))
        let last = try await client.send(type: "AddProduct", data: Fixture.product("tea"))
        try await cluster.queryStatus(after: last.position)
        return (cluster, last.position)
    }

    @Test("the commands socket refuses every bad shape and keeps serving")
    func commandsSocket() async throws {
        let (cluster, head) = try await Self.seeded()
        let target = Self.commands(cluster)
        let cases = Self.cases(for: target)
        #expect(try await Self.check(cases, at: target.endpoint) == cases.count)
        try await Self.expectIntact(cluster, head: head, valid: target)
        // Refused requests are not remembered: the worker counted each as rejected.
        let client = try cluster.client()
        defer { client.close() }
        let status = try await client.status(of: .commands)
        #expect(status["commands"]?["rejected"] == .int(cases.count))
    }

    @Test("the queries socket refuses every bad shape and keeps serving")
    func queriesSocket() async throws {
        let (cluster, head) = try await Self.seeded()
        let target = Self.queries(cluster)
        let cases = Self.cases(for: target)
        #expect(try await Self.check(cases, at: target.endpoint) == cases.count)
        try await Self.expectIntact(cluster, head: head, valid: target)
    }

    @Test("the log socket refuses every bad shape and keeps serving")
    func logSocket() async throws {
        let (cluster, head) = try await Self.seeded()
        let target = Self.log(cluster)
        let cases = Self.cases(for: target)
        #expect(try await Self.check(cases, at: target.endpoint) == cases.count)
        try await Self.expectIntact(cluster, head: head, valid: target)
    }

    @Test("Status and Rebuild carry only id and type: any other field is refused, and no rebuild starts")
    func bareRequestsRefuseOtherFields() async throws {
        let (cluster, head) = try await Self.seeded()
        func extra(_ id: String, _ type: String) -> Case {
            Case(
                name: "\(type) with an unknown field",
                frames: [[], bytes(["id": .string(id), "type": .string(type), "verbose": true])],
                code: "malformed_request", id: .string(id), details: ["field": "verbose"])
        }
        #expect(try await Self.check([extra("s1", "Status")], at: cluster.commands) == 1)
        #expect(try await Self.check([extra("s2", "Status"), extra("r1", "Rebuild")], at: cluster.queries) == 2)
        try await Self.expectIntact(cluster, head: head, valid: Self.queries(cluster))
        let client = try cluster.client()
        defer { client.close() }
        let status = try await client.status(of: .queries)
        #expect(status["rebuild"] == ["state": "idle"])
        #expect(status["generation"] == 1)
    }

    @Test("a request over 1 MiB is refused with the limit; one of exactly 1 MiB is read")
    func oversized() async throws {
        let (cluster, head) = try await Self.seeded()
        let limit = WireRequest.maximumSize
        #expect(limit == 1 << 20)
        for target in [Self.commands(cluster), Self.queries(cluster), Self.log(cluster)] {
            // {"id":"big","type":"…","padding":"xxx…"}: the unknown field makes it refusable once read.
            func padded(to size: Int) -> [UInt8] {
                var object = target.valid("big")
                object["padding"] = ""
                let base = bytes(.object(object))  // ends with "padding":""}
                return base.dropLast(2) + [UInt8](repeating: UInt8(ascii: "x"), count: size - base.count)
                    + base.suffix(2)
            }
            let cases = [
                Case(
                    name: "one byte over the limit", frames: [[], padded(to: limit + 1)], code: "malformed_request",
                    details: ["limit": .int(limit)]),
                Case(
                    name: "4 MiB", frames: [[], padded(to: 4 * limit)], code: "malformed_request",
                    details: ["limit": .int(limit)]),
                Case(
                    name: "exactly the limit", frames: [[], padded(to: limit)], code: "malformed_request", id: "big",
                    details: ["field": "padding"]),
            ]
            #expect(try await Self.check(cases, at: target.endpoint) == cases.count)
        }
        try await Self.expectIntact(cluster, head: head, valid: Self.commands(cluster))
    }

    @Test("seeded random bytes on every socket get malformed_request, and nothing changes")
    func randomBytes() async throws {
        let (cluster, head) = try await Self.seeded()
        var generator = SeededGenerator(seed: 0x10_6B00C)
        for endpoint in [cluster.commands, cluster.queries, cluster.log] {
            var cases: [Case] = []
            for index in 0..<150 {
                let count = Int.random(in: 1...300, using: &generator)
                var body = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
                if index % 3 == 0 { body[0] = UInt8(ascii: "{") }  // looks like JSON for a moment
                let withDelimiter = index % 5 != 4
                cases.append(
                    Case(
                        name: "random \(index)", frames: withDelimiter ? [[], body] : [body], code: "malformed_request")
                )
            }
            #expect(try await Self.check(cases, at: endpoint) == cases.count)
        }
        try await Self.expectIntact(cluster, head: head, valid: Self.queries(cluster))
        try await Self.expectIntact(cluster, head: head, valid: Self.log(cluster))
        try await Self.expectIntact(cluster, head: head, valid: Self.commands(cluster))
    }

    @Test("clients that send a command and vanish before the reply disturb no one else")
    func vanishingClients() async throws {
        let (cluster, head) = try await Self.seeded()
        let commands = cluster.commands
        let vanishing = Task {
            try await offThePool {
                let context = try ZMQContext()
                for index in 0..<200 {
                    let socket = try ZMQSocket(context, .dealer)
                    // Long enough a linger that the request leaves before the socket is gone.
                    try socket.set(.linger, 1_000)
                    try socket.connect(commands)
                    let request: JSONObject = [
                        "id": .string("gone-\(index)"), "type": "AddProduct",
                        "data": .object(Fixture.product("gone\(index)")),
                    ]
                    _ = try socket.send([[], bytes(.object(request))])
                    _ = consume socket
                }
            }
        }
        let client = try cluster.client()
        defer { client.close() }
        var receipts: [CommandReceipt] = []
        for index in 0..<40 {
            receipts.append(try await client.send(type: "AddProduct", data: Fixture.product("stays\(index)")))
        }
        try await vanishing.value
        #expect(receipts.count == 40)

        // Everything that arrived was committed in order; the vanished clients' replies were dropped quietly.
        let log = try await cluster.wholeLog()
        #expect(log.map(\.position) == Array(1...Int64(log.count)))
        let stays = log.filter { $0.metadata.commandId.hasPrefix("gone-") == false && $0.position > head }
        #expect(stays.map(\.envelope) == receipts.flatMap(\.events).map(\.envelope))
        let gone = await eventually {
            let log = (try? await cluster.wholeLog()) ?? []
            return log.contains { $0.metadata.commandId.hasPrefix("gone-") }
        }
        #expect(gone, "no vanished client's command reached the worker, so nothing was tested")
        let final = try await cluster.head()
        let verify = try await runLogbook(["verify", "--data-dir", cluster.workerDataDirectory])
        #expect(try verify.json() == ["ok": true, "events": .int(Int(final))])
        let after = try await client.send(type: "AddProduct", data: Fixture.product("after"))
        #expect(after.position == final + 1)
        #expect(cluster.errorLines(of: "worker").isEmpty, "\(cluster.stderr(of: "worker"))")
    }
}
