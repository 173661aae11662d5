import LogbookApplication
import LogbookJSON
import LogbookPostgres
import LogbookTestSupport
import LogbookWire
import LogbookZMQ
import Testing

/// What wakes a feed process and what it survives: a lost hint costs one poll, a hint
/// alone wakes it, a query process follows it as it follows a worker, and while the
/// database is away the workers answer `unavailable` and the feed keeps its place.
@Suite(
    "Scale-out on PostgreSQL: hints, polls, queries and the database going away", .serialized,
    .enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresFeedWakeUpTests {
    /// Registers new users through `client`, one at a time, until the tap receives a feed
    /// message (a subscription takes effect some time after it is made, so the first ones
    /// may be missed); each attempt waits up to `milliseconds`, for as long as the tests'
    /// patience lasts. Returns the attempts made (0: no message came).
    static func registerUntilPublished(
        _ client: borrowing DealerClient, _ tap: inout FeedTap, prefix: String, within milliseconds: Int = 3_000
    ) throws -> Int {
        let deadline = ContinuousClock.now + .milliseconds(patienceMilliseconds)
        var attempt = 0
        while ContinuousClock.now < deadline {
            attempt += 1
            let reply = try client.request(
                Fixture.registerUser("\(prefix)\(attempt)", commandId: "\(prefix)\(attempt)"))
            #expect(reply["ok"] == true, "\(reply)")
            try tap.take(within: milliseconds) { !$0.isEmpty }
            if !tap.messages.isEmpty { return attempt }
        }
        return 0
    }

    @Test("with every hint lost, the feed still publishes each commit by its poll")
    func lostHints() throws {
        let rig = try PostgresFeedRig(hintFeed: false)
        defer { rig.stop() }
        var tap = try FeedTap(rig.context, feed: rig.endpoints.feed)
        let worker = try rig.commandsClient(0)
        #expect(try Self.registerUntilPublished(worker, &tap, prefix: "lost-") > 0, "nothing was published")
        #expect(tap.messages.first?.topic == "users")
    }

    @Test("a hint wakes the feed: with a poll of ten minutes, commits are still published")
    func hintsWakeTheFeed() throws {
        let rig = try PostgresFeedRig(hintFeed: true, pollMilliseconds: 600_000)
        defer { rig.stop() }
        var tap = try FeedTap(rig.context, feed: rig.endpoints.feed)
        let worker = try rig.commandsClient(1)
        #expect(try Self.registerUntilPublished(worker, &tap, prefix: "hinted-") > 0, "nothing was published")
    }

    @Test("a query process pointed at the feed process answers with the commands' effects")
    func queryFollowsTheFeed() throws {
        let rig = try PostgresFeedRig(withQuery: true)
        defer { rig.stop() }
        let worker = try rig.commandsClient(1)
        let queries = try DealerClient(rig.context, rig.endpoints.queries)
        let accepted = try worker.request(Fixture.registerUser("u1", commandId: "c1"))
        let position = try #require(accepted["position"]?.intValue)
        let reply = try queries.request(
            Fixture.getUser(
                "u1", queryId: "q1", minPosition: position,
                timeoutMs: QueryRequest.maximumTimeoutMilliseconds),
            within: patienceMilliseconds)
        #expect(reply["ok"] == true, "\(reply)")
        #expect(reply["result"]?.objectValue?["userId"] == "u1")
        #expect(reply["result"]?.objectValue?["email"] == "u1@example.com")
    }

    @Test("while the database is away a worker answers unavailable; then it serves again and the feed publishes on")
    func databaseAway() throws {
        let rig = try PostgresFeedRig()
        defer { rig.stop() }
        var tap = try FeedTap(rig.context, feed: rig.endpoints.feed)
        let worker = try rig.commandsClient(0)
        #expect(try Self.registerUntilPublished(worker, &tap, prefix: "before-") > 0, "nothing was published")

        let admin = try RawPostgres(try #require(PostgresTestServer.url))
        let name = rig.database.name
        try admin.run("ALTER DATABASE \(name) ALLOW_CONNECTIONS false")
        try admin.run("SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE datname = '\(name)'")
        let refused = try worker.request(Fixture.registerUser("away", commandId: "away"))
        #expect(refused["error"]?.objectValue?["code"] == "unavailable", "\(refused)")
        #expect(try worker.workerStatus().head == nil, "the head cannot be read while the database is away")

        try admin.run("ALTER DATABASE \(name) ALLOW_CONNECTIONS true")
        let accepted = try worker.request(Fixture.registerUser("away", commandId: "away"))
        #expect(accepted["ok"] == true, "\(accepted)")
        let position = try #require(accepted["events"]?.arrayValue?.first?.objectValue?["position"]?.intValue)
        try tap.take(within: patienceMilliseconds) { $0.last.map { $0.position >= position } ?? false }
        #expect(tap.messages.last?.position == Int64(position), "the feed published the event after the outage")
        #expect(tap.problem == nil, "\(tap.problem ?? "")")
        let logged = try rig.store().read(fromPosition: 1, limit: 1_000, categories: nil)
        #expect(logged.filter { $0.metadata.commandId == "away" }.count == 2, "the user and its email claim, once")
    }
}
