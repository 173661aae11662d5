import Foundation
import LogbookJSON
import LogbookTestSupport
import Testing

/// Scale-out with real processes on one PostgreSQL database: two `logbook run worker
/// --store postgresql://…`, a `logbook run feed` and a `logbook run query` following it,
/// driven by the CLI; `--store` values that cannot be used; the database going away.
@Suite(
    "Scale-out on PostgreSQL: real workers, feed and query processes",
    .enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresScaleOutTests {
    @Test("commands to either worker are queried through the query process and subscribed to on the feed")
    func workersFeedAndQuery() async throws {
        let cluster = try await PostgresCluster.started()
        let sent = [
            try await cluster.send(
                0, "RegisterUser", #"{"userId":"u1","name":"Ann","email":"ann@example.com"}"#, id: "c1"),
            try await cluster.send(
                1, "AddProduct", #"{"productId":"p1","name":"Tea","price":"2.50","category":"food","stock":3}"#,
                id: "c2"),
            try await cluster.send(
                0, "PurchaseProduct", #"{"orderId":"o1","userId":"u1","productId":"p1","quantity":2}"#, id: "c3"),
            try await cluster.send(1, "RestockProduct", #"{"productId":"p1","quantity":5}"#, id: "c4"),
        ]
        for result in sent { #expect(result.status == 0, "\(result.stdout) \(result.stderr)") }
        let position = try #require(try sent.last?.json()["position"]?.intValue)
        #expect(position == 6, "user, email claim, product, purchase, order, restock")

        let query = try await runLogbook([
            "query", "GetProduct", #"{"productId":"p1"}"#, "--min-position", "\(position)", "--queries",
            cluster.queries,
        ])
        #expect(query.status == 0, "\(query.stdout) \(query.stderr)")
        #expect(try query.json()["result"]?.objectValue?["stock"] == 6)

        let subscribed = try await runLogbook([
            "subscribe", "--from", "1", "--limit", "5", "--feed", cluster.feed, "--log", cluster.feedLog,
        ])
        #expect(subscribed.status == 0, "\(subscribed.stderr)")
        let events = try subscribed.jsonLines()
        #expect(events.compactMap { $0["position"]?.intValue } == [1, 3, 4, 5, 6])
        #expect(
            events.map { $0["type"] } == [
                "UserRegistered", "ProductAdded", "ProductPurchased", "OrderPlaced", "ProductRestocked",
            ])

        // Live: a subscriber waiting for the next position gets the event committed after it
        // started (from the feed, or from the log if it joined the feed late: never a hole).
        let live = try BackgroundLogbook([
            "subscribe", "products", "--from", "7", "--limit", "1", "--feed", cluster.feed, "--log", cluster.feedLog,
        ])
        #expect(try await cluster.send(0, "RestockProduct", #"{"productId":"p1","quantity":1}"#, id: "c5").status == 0)
        #expect(await live.waitForExit() == 0)
        #expect(try live.jsonLines().first?["position"] == 7)

        let replay = try await runLogbook(["replay", "--from", "1", "--log", cluster.workers[1].log])
        #expect(try replay.jsonLines().count == 7, "a worker still serves ReadLog")
        for name in ["worker-0", "worker-1", "feed", "query"] {
            #expect(cluster.isRunning(name), "\(name): \(cluster.stderr(of: name))")
        }
    }

    @Test("a --store that cannot be used is one line on stderr and exit status 3, and nothing is touched")
    func unusableStores() async throws {
        let refusing = try PasswordRefusingServer()
        defer { refusing.stop() }
        let foreign = try PostgresTestDatabase()
        try RawPostgres(foreign.connectionString).run("CREATE TABLE notes (id integer PRIMARY KEY)")
        let newer = try PostgresTestDatabase()
        try RawPostgres(newer.connectionString).run("CREATE TABLE keep (id integer)")
        try RawPostgres(newer.connectionString).run("DROP TABLE keep")
        let newerURL = try PostgresCluster.url(of: newer)
        // The worker creates the schema, then cannot bind (an ipc path in a folder that does
        // not exist fails for root too, unlike a privileged port) and exits.
        let unbindable = "ipc:///nonexistent-\(UUID().uuidString)/commands"
        #expect(try await runLogbook(["run", "worker", "--store", newerURL, "--commands", unbindable]).status != 0)
        try RawPostgres(newer.connectionString).run("UPDATE logbook_schema SET version = 99")

        let cases: [(store: String, says: String)] = [
            ("postgresql://logbook:sesame@[::1", "malformed connection string"),
            ("postgresql://logbook:sesame@127.0.0.1:\(refusing.port)/logbook", "password authentication failed"),
            (try PostgresCluster.url(of: foreign), "not a Logbook event log"),
            (newerURL, "schema version 99"),
        ]
        let ports = try FreePorts.take(3).map { "tcp://127.0.0.1:\($0)" }
        for (store, says) in cases {
            for role in ["worker", "feed"] {
                let result = try await runLogbook([
                    "run", role, "--store", store, "--commands", ports[0], "--log", ports[1], "--feed", ports[2],
                ])
                let lines = result.stderr.split(separator: "\n")
                #expect(result.status == 3, "\(role) \(says): \(result.stderr)")
                #expect(lines.count == 1 && result.stderr.contains(says), "\(role): \(result.stderr)")
                #expect(!result.stderr.contains("sesame"), "the password is never printed")
            }
        }
        #expect(
            try RawPostgres(foreign.connectionString).run("SELECT to_regclass('logbook_schema') IS NULL") == [["t"]])
        #expect(try RawPostgres(newer.connectionString).run("SELECT version FROM logbook_schema") == [["99"]])
        let mistyped = try await runLogbook(["run", "worker", "--store", "mysql://logbook:sesame@db/x"])
        #expect(mistyped.status == 2 && !mistyped.stderr.contains("sesame"), "\(mistyped.stderr)")
    }

    @Test(
        "while PostgreSQL is away the workers answer unavailable and keep running; then every acknowledged command is in the log once"
    )
    func databaseGoesAway() async throws {
        let cluster = try await PostgresCluster.started()
        let admin = try RawPostgres(try #require(PostgresTestServer.url))
        let name = cluster.database.name
        var acknowledged: [String] = []
        var refused: [String] = []
        func send(_ worker: Int, _ id: String) async throws {
            let result = try await cluster.send(
                worker, "RegisterUser", #"{"userId":"\#(id)","name":"Ann","email":"\#(id)@example.com"}"#, id: id)
            let reply = try result.json()
            if reply["ok"] == true {
                acknowledged.append(id)
            } else {
                #expect(reply["error"]?.objectValue?["code"] == "unavailable", "\(reply)")
                refused.append(id)
            }
        }
        for index in 0..<6 { try await send(index % 2, "before-\(index)") }
        try admin.run("ALTER DATABASE \(name) ALLOW_CONNECTIONS false")
        try admin.run("SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE datname = '\(name)'")
        for index in 0..<4 { try await send(index % 2, "away-\(index)") }
        #expect(refused.count == 4, "every command while the database is away is refused as unavailable")
        #expect(
            await eventually { cluster.stderr(of: "feed").contains("cannot read the log") },
            "the feed process notices: \(cluster.stderr(of: "feed"))")
        try admin.run("ALTER DATABASE \(name) ALLOW_CONNECTIONS true")
        for index in 0..<6 { try await send(index % 2, "after-\(index)") }
        for id in refused where id.hasPrefix("away-") { try await send(0, id) }
        #expect(acknowledged.count == 16, "refused \(refused)")

        for role in ["worker-0", "worker-1", "feed", "query"] {
            #expect(cluster.isRunning(role), "\(role) keeps running: \(cluster.stderr(of: role))")
        }
        let rows = try RawPostgres(cluster.database.connectionString).run(
            "SELECT command_id, count(*) FROM events GROUP BY command_id ORDER BY command_id")
        #expect(rows.map { $0[0] } == acknowledged.sorted())
        #expect(rows.allSatisfy { $0[1] == "2" }, "each registration's user and email claim, once: \(rows)")
        let head = try RawPostgres(cluster.database.connectionString).run("SELECT position FROM log_head")
        #expect(head == [["32"]])

        let subscribed = try await runLogbook([
            "subscribe", "users", "--from", "1", "--limit", "16", "--feed", cluster.feed, "--log", cluster.feedLog,
        ])
        #expect(
            try subscribed.jsonLines().compactMap { $0["position"]?.intValue } == Array(stride(from: 1, to: 32, by: 2)),
            "\(subscribed.status) \(subscribed.stdout) \(subscribed.stderr)")
        let query = try await runLogbook([
            "query", "ListUsers", #"{"perPage":100}"#, "--min-position", "32", "--queries", cluster.queries,
        ])
        #expect(try query.json()["result"]?.objectValue?["total"] == 16, "\(query.stdout)")
        #expect(await eventually { cluster.stderr(of: "feed").contains("following the log again") })
    }

    @Test("a groups process keeps its groups in the database and hands out what either worker appends")
    func groupsOnPostgres() async throws {
        let cluster = try await PostgresCluster.started()
        try await cluster.startGroups()
        let created = try await runLogbook([
            "groups", "create", "shop", "--topics", "products", "--groups", cluster.groups,
        ])
        #expect(created.status == 0, "\(created.stdout) \(created.stderr)")
        for index in 0..<4 {
            let sent = try await cluster.send(
                index % 2, "AddProduct",
                #"{"productId":"p\#(index)","name":"Tea","price":"1.00","category":"food","stock":1}"#, id: "c\(index)")
            #expect(sent.status == 0, "\(sent.stdout) \(sent.stderr)")
        }
        let consumed = try await runLogbook(["consume", "shop", "--limit", "4", "--groups", cluster.groups])
        #expect(consumed.status == 0, "\(consumed.stderr)")
        #expect(try consumed.jsonLines().compactMap { $0["position"]?.intValue }.sorted() == [1, 2, 3, 4])

        // The group and its checkpoint are rows of the database, and outlive the process.
        let rows = try RawPostgres(cluster.database.connectionString).run(
            "SELECT name, checkpoint FROM logbook_groups")
        #expect(rows == [["shop", "4"]], "\(rows)")
        #expect(!FileManager.default.fileExists(atPath: cluster.directory.path + "/groups/groups.sqlite3"))
        #expect(cluster.stop("groups", SIGKILL) == SIGKILL)
        try await cluster.startGroups()
        let shown = try await runLogbook(["groups", "show", "shop", "--groups", cluster.groups])
        #expect(try shown.json()["result"]?.objectValue?["checkpoint"] == 4, "\(shown.stdout) \(shown.stderr)")
    }
}
