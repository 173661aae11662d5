import Foundation
import Glibc
import LogbookClient
import LogbookJSON
import LogbookZMQ
import Testing

/// `--metrics`: real worker, query and groups processes serve Prometheus's text format over
/// HTTP; curl scrapes it, `promtool check metrics` accepts it, and the figures move with the
/// commands and queries sent, agreeing with `Status`.
@Suite("End to end: metrics", .serialized)
struct MetricsTests {
    @Test(
        "worker, query and groups metrics move as commands and queries are served, agree with Status, and pass promtool"
    )
    func scrape() async throws {
        let ports = try FreePorts.take(3)
        let workerMetrics = "127.0.0.1:\(ports[0])"
        let queryMetrics = "127.0.0.1:\(ports[1])"
        let groupsMetrics = "127.0.0.1:\(ports[2])"
        let cluster = try ServiceCluster()
        cluster.workerFlags = ["--metrics", workerMetrics]
        cluster.queryFlags = ["--metrics", queryMetrics]
        try await cluster.startWorker()
        try await cluster.startQuery()
        try await cluster.startGroups(["--metrics", groupsMetrics])
        let client = try cluster.client()
        defer { client.close() }

        let before = try await Scrape.of(workerMetrics)
        #expect(before.value("logbook_commands_accepted_total") == 0)
        #expect(before.value("logbook_commit_duration_seconds_count") == 0)
        #expect(before.value("logbook_commands_rejected_total{code=\"already_exists\"}") == 0)

        var last: Int64 = 0
        for name in ["ann", "bob", "cy"] {
            last = try await client.send(type: "RegisterUser", data: Fixture.user(name)).position
        }
        _ = try await client.send(type: "AddProduct", data: Fixture.product("tea"), commandId: "add-tea")
        last = try await client.send(type: "AddProduct", data: Fixture.product("tea"), commandId: "add-tea").position
        _ = await refusal { try await client.send(type: "RegisterUser", data: Fixture.user("ann")) }
        _ = await refusal { try await client.send(type: "NoSuchCommand", data: [:]) }

        let worker = try await Scrape.of(workerMetrics)
        #expect(worker.value("logbook_commands_accepted_total") == 5)
        #expect(worker.value("logbook_commands_retried_total") == 1)
        #expect(worker.value("logbook_commands_rejected_total{code=\"already_exists\"}") == 1)
        #expect(worker.value("logbook_commands_rejected_total{code=\"unknown_type\"}") == 1)
        // Three users (a user event and an email claim each) and a product.
        #expect(worker.value("logbook_events_appended_total") == 7)
        #expect(worker.value("logbook_log_head_position") == Double(last))
        // Every command reached the handler (an unknown type is its refusal) in a batch, and
        // was timed to its reply.
        #expect(worker.value("logbook_batch_commands_sum") == 7)
        #expect(worker.value("logbook_command_duration_seconds_count") == 7)
        let commits = try #require(worker.value("logbook_commit_duration_seconds_count"))
        #expect(commits >= 1 && commits <= 7)
        #expect(worker.value("logbook_commit_duration_seconds_bucket{le=\"+Inf\"}") == commits)
        #expect((worker.value("logbook_commit_duration_seconds_sum") ?? 0) > 0)
        #expect((worker.value("logbook_uptime_seconds") ?? -1) >= 0)

        // Status is made from the same numbers.
        let status = try await client.status(of: .commands)
        #expect(status["commands"]?["accepted"] == .int(5))
        #expect(status["commands"]?["rejected"] == .int(2))
        #expect(status["batches"]?["commands"] == .int(7))
        #expect(status["latency"]?["commands"] == .int(7))
        #expect(status["latency"]?["commits"] == .int(Int(commits)))

        let patient = try cluster.patientClient()
        defer { patient.close() }
        _ = try await patient.query(type: "ListUsers", minPosition: last, timeoutMs: patientQueryMilliseconds)
        _ = await refusal { try await client.query(type: "GetUser", data: ["userId": "nobody"]) }
        _ = await refusal { try await client.query(type: "NoSuchQuery") }
        let query = try await Scrape.of(queryMetrics)
        #expect(query.value("logbook_query_checkpoint_position").map { $0 >= Double(last) } == true)
        #expect(query.value("logbook_query_lag_events") == 0)
        #expect(query.value("logbook_query_lag_seconds") == 0)
        // The feed carries users and products, not email claims.
        #expect(query.value("logbook_query_events_applied_total") == 4)
        #expect(query.value("logbook_queries_total{type=\"ListUsers\",outcome=\"ok\"}") == 1)
        #expect(query.value("logbook_queries_total{type=\"GetUser\",outcome=\"not_found\"}") == 1)
        #expect(query.value("logbook_queries_total{type=\"other\",outcome=\"unknown_type\"}") == 1)
        #expect(query.value("logbook_queries_parked") == 0)
        #expect(query.value("logbook_rebuild_running") == 0)

        // The query process follows the feed; a subscriber adds one connection while it runs.
        let follower = await eventually { (try? await Scrape.of(workerMetrics).value("logbook_feed_subscribers")) == 1 }
        #expect(follower, "the query process is the feed's one subscriber")
        let subscriber = try cluster.background(["subscribe"])
        let two = await eventually { (try? await Scrape.of(workerMetrics).value("logbook_feed_subscribers")) == 2 }
        #expect(two, "\(subscriber.stderr)")
        #expect(try await client.status(of: .commands)["subscribers"] == .int(2))
        _ = await subscriber.signal(SIGKILL)
        let one = await eventually { (try? await Scrape.of(workerMetrics).value("logbook_feed_subscribers")) == 1 }
        #expect(one, "a subscriber that left is no longer counted")

        // A group with no member takes the product event from the log and holds it pending,
        // its checkpoint just before it.
        let created = try await cluster.run(["groups", "create", "shop", "--topics", "products"])
        #expect(created.status == 0, "\(created.stdout) \(created.stderr)")
        let taken = await eventually {
            (try? await Scrape.of(groupsMetrics).value("logbook_group_pending{group=\"shop\"}")) == 1
        }
        #expect(taken, "the group did not take the product event")
        let groups = try await Scrape.of(groupsMetrics)
        #expect(groups.value("logbook_group_checkpoint{group=\"shop\"}") == Double(last - 1))
        #expect((groups.value("logbook_group_lag{group=\"shop\"}") ?? 0) >= 1)
        #expect(groups.value("logbook_group_members{group=\"shop\"}") == 0)
        #expect(groups.value("logbook_group_in_flight{group=\"shop\"}") == 0)
        #expect(groups.value("logbook_group_parked{group=\"shop\"}") == 0)
        #expect(groups.value("logbook_group_deliveries_total{group=\"shop\"}") == 0)
        #expect((groups.value("logbook_uptime_seconds") ?? -1) >= 0)

        // Every metric the dashboard and the alert rules in deploy/ use is one the processes serve.
        let served = Set(
            (worker.text + query.text + groups.text).split(separator: "\n").compactMap { line in
                line.hasPrefix("# TYPE ") ? line.split(separator: " ")[2] : nil
            }.map(String.init))
        for file in ["grafana/logbook-dashboard.json", "prometheus/logbook-alerts.yml"] {
            let text = try String(contentsOf: Self.deploy.appendingPathComponent(file), encoding: .utf8)
            for name in Self.metricNames(in: text) {
                #expect(
                    served.contains(name) || Self.curveOnly.contains(name),
                    "\(file) uses \(name), which no process serves")
            }
        }

        for scrape in [before, worker, query, groups] {
            let check = try await scrape.promtool()
            #expect(check.status == 0 && check.output.isEmpty, "promtool: \(check.output)\n\(scrape.text)")
        }
    }

    @Test("with CURVE on: handshakes refused and unauthorized commands are counted, and promtool accepts the text")
    func curve() async throws {
        let ports = try FreePorts.take(2)
        let cluster = try ServiceCluster()
        let keys = try TestKeys(in: cluster.directory)
        try keys.make("query", .reader)
        cluster.clientKeys = try keys.make("admin", .admin)
        let reader = try keys.make("reader", .reader)
        cluster.workerFlags = keys.serverFlags + ["--metrics", "127.0.0.1:\(ports[0])"]
        cluster.queryFlags = keys.serverFlags + keys.clientFlags("query") + ["--metrics", "127.0.0.1:\(ports[1])"]
        try await cluster.startWorker()
        try await cluster.startQuery()

        let readerClient = try LogbookClient(
            endpoints: cluster.endpoints, timeout: .seconds(5), attempts: 1, security: reader)
        defer { readerClient.close() }
        let refused = await refusal { try await readerClient.send(type: "AddProduct", data: Fixture.product("tea")) }
        #expect(refused?.code == "unauthorized")
        let admin = try #require(cluster.clientKeys)
        let stranger = try LogbookClient(
            endpoints: cluster.endpoints, timeout: .milliseconds(300), attempts: 1,
            security: CurveClientKeys(keys: CurveKeyPair.generate(), serverKey: admin.serverKey))
        defer { stranger.close() }
        _ = try? await stranger.status(of: .commands)

        let worker = "127.0.0.1:\(ports[0])"
        let counted = await eventually {
            let scrape = try? await Scrape.of(worker)
            return (scrape?.value("logbook_curve_handshakes_total{outcome=\"refused\"}") ?? 0) >= 1
        }
        #expect(counted, "the stranger's handshake was not counted as refused")
        let scrape = try await Scrape.of(worker)
        #expect(scrape.value("logbook_commands_rejected_total{code=\"unauthorized\"}") == 1)
        #expect((scrape.value("logbook_curve_handshakes_total{outcome=\"admitted\"}") ?? 0) >= 2)
        #expect(scrape.value("logbook_requests_dropped_total") == 0)
        for text in [scrape, try await Scrape.of("127.0.0.1:\(ports[1])")] {
            #expect(text.value("logbook_requests_dropped_total") != nil)
            let check = try await text.promtool()
            #expect(check.status == 0 && check.output.isEmpty, "promtool: \(check.output)")
        }
    }

    /// The metrics a process serves only with CURVE on (its `peers` in `Status`).
    static let curveOnly: Set = ["logbook_curve_handshakes_total", "logbook_requests_dropped_total"]

    /// The repository's deploy/ folder.
    static var deploy: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("deploy")
    }

    /// The `logbook_…` metric names a text mentions, without a histogram's `_bucket`, `_sum`, `_count`.
    static func metricNames(in text: String) -> Set<String> {
        var names = Set<String>()
        var rest = Substring(text)
        while let start = rest.range(of: "logbook_") {
            let name = rest[start.lowerBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            var base = String(name)
            for suffix in ["_bucket", "_sum", "_count"] where base.hasSuffix(suffix) {
                base = String(base.dropLast(suffix.count))
            }
            // Job names (logbook-worker) have a dash, not an underscore, so never match.
            names.insert(base)
            rest = rest[name.endIndex...]
        }
        return names
    }

    @Test("a taken metrics port: run refuses to start with one line and exit 3; a bad address is a usage error")
    func refusedStart() async throws {
        let cluster = try ServiceCluster()
        let taken = try MetricsPortHolder()
        let directory = cluster.directory.appendingPathComponent("w").path
        let busy = try await cluster.run(["run", "worker", "--data-dir", directory, "--metrics", taken.address])
        #expect(busy.status == 3)
        #expect(
            busy.stderr.contains(
                "logbook: error: run: cannot serve metrics on \(taken.address): Address already in use"),
            "\(busy.stderr)")
        #expect(!busy.stderr.contains("worker started"), "\(busy.stderr)")
        let bad = try await cluster.run(["run", "query", "--data-dir", directory, "--metrics", "9464"])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("--metrics '9464': expected HOST:PORT"), "\(bad.stderr)")
    }

    @Test("up --metrics HOST:PORT: the worker serves on PORT, the query process on PORT+1, groups on PORT+2")
    func up() async throws {
        let cluster = try ServiceCluster()
        let port = try FreePorts.consecutiveTriple()
        let up = try cluster.background([
            "up", "--data-dir", cluster.directory.appendingPathComponent("up").path, "--metrics", "127.0.0.1:\(port)",
        ])
        let client = try cluster.client(timeout: .milliseconds(300), attempts: 1)
        defer { client.close() }
        let answering = await bothAnswer(cluster)
        try #require(answering, "\(up.stderr)")
        let worker = try await Scrape.of("127.0.0.1:\(port)")
        let query = try await Scrape.of("127.0.0.1:\(port + 1)")
        #expect(worker.value("logbook_commands_accepted_total") == 0)
        #expect(query.value("logbook_query_lag_events") == 0)
        let created = try await cluster.run(["groups", "create", "mail", "--topics", "orders"])
        #expect(created.status == 0, "\(created.stdout) \(created.stderr)")
        let groups = try await Scrape.of("127.0.0.1:\(port + 2)")
        #expect(groups.value("logbook_group_lag{group=\"mail\"}") == 0, "\(groups.text)")
        #expect(await up.signal(SIGTERM) == 0, "\(up.stderr)")
    }
}

/// A loopback TCP port held open (listening) for as long as the value lives.
final class MetricsPortHolder {
    let descriptor: Int32
    let address: String

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.descriptor = descriptor
        var socketAddress = sockaddr_in()
        socketAddress.sin_family = sa_family_t(AF_INET)
        socketAddress.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && listen(descriptor, 1) == 0
                    && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else { throw ClusterError.notAnswering("cannot hold a port") }
        address = "127.0.0.1:\(UInt16(bigEndian: socketAddress.sin_port))"
    }

    deinit { close(descriptor) }
}

extension FreePorts {
    /// A port P such that P, P+1 and P+2 are all free now (for `up --metrics`).
    static func consecutiveTriple() throws -> Int {
        for _ in 0..<200 {
            let ports = try take(3)
            if ports == [ports[0], ports[0] + 1, ports[0] + 2] { return ports[0] }
        }
        throw ClusterError.notAnswering("no three consecutive free ports")
    }
}
