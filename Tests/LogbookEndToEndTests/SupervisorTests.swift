import Foundation
import Glibc
import LogbookClient
import LogbookJSON
import LogbookTestSupport
import LogbookZMQ
import Testing

/// `logbook run` under systemd, with the test playing systemd: its own `NOTIFY_SOCKET`
/// datagram socket and `WATCHDOG_USEC`. READY=1 comes only once every socket is bound (and
/// never when one cannot be), WATCHDOG=1 comes over and over while the process serves,
/// stops while one serving loop is wedged (the worker's command loop waiting for a write
/// lock the test holds on the log) and comes back when it is released; STOPPING=1 on SIGTERM.
@Suite("End to end: systemd notifications and watchdog", .serialized)
struct SupervisorTests {
    /// The watchdog interval the tests set: a loop counts as alive for 500 ms after its
    /// check-in; systemd would restart a process silent for this long.
    static let watchdogMilliseconds = 1_000

    static func notifySocket(
        _ cluster: ServiceCluster, onMessage: @escaping @Sendable (NotifySocket.Message) -> Void = { _ in }
    ) throws -> NotifySocket {
        try NotifySocket(path: cluster.directory.appendingPathComponent("notify").path, onMessage: onMessage)
    }

    /// Checks what a supervised process said from its start to its clean stop: READY=1
    /// first, then at least three pings, then STOPPING=1 last.
    static func checkLifecycle(_ messages: [NotifySocket.Message]) {
        #expect(messages.first?.isReady == true, "READY=1 must come first: \(messages.map(\.text))")
        #expect(messages.count(where: \.isReady) == 1)
        #expect(messages.count(where: \.isWatchdog) >= 3)
        #expect(messages.last?.isStopping == true, "STOPPING=1 must come last: \(messages.map(\.text))")
        #expect(messages.last?.text.contains("STATUS=stopping on SIGTERM") == true)
    }

    @Test("worker: READY=1 once commands, feed and log are bound; WATCHDOG=1 repeats; STOPPING=1 on SIGTERM")
    func workerLifecycle() async throws {
        let cluster = try ServiceCluster()
        let endpoints = [cluster.commands, cluster.feed, cluster.log]
        let boundAtReady = Shared<[Bool]>([])
        let notify = try Self.notifySocket(cluster) { message in
            // Looked at on the socket's thread as soon as READY=1 is read, before anything else.
            if message.isReady { boundAtReady.update { $0 = endpoints.map(isListening) } }
        }
        try await cluster.startWorker(environment: notify.environment(watchdogMilliseconds: Self.watchdogMilliseconds))
        #expect(await eventually(within: patience) { notify.messages.count(where: \.isWatchdog) >= 3 })
        #expect(boundAtReady.value == [true, true, true])
        #expect(notify.messages.first?.text.contains("STATUS=serving commands on \(cluster.commands)") == true)

        #expect(cluster.stopWorker(SIGTERM) == 0)
        #expect(await eventually { notify.messages.last?.isStopping == true })
        Self.checkLifecycle(notify.messages)
    }

    @Test("query process: READY=1 once its queries socket is bound; WATCHDOG=1 repeats; STOPPING=1 on SIGTERM")
    func queryLifecycle() async throws {
        let cluster = try ServiceCluster()
        try await cluster.startWorker()
        let queries = cluster.queries
        let boundAtReady = Shared<Bool?>(nil)
        let notify = try Self.notifySocket(cluster) { message in
            if message.isReady { boundAtReady.update { $0 = isListening(queries) } }
        }
        try await cluster.startQuery(environment: notify.environment(watchdogMilliseconds: Self.watchdogMilliseconds))
        #expect(await eventually(within: patience) { notify.messages.count(where: \.isWatchdog) >= 3 })
        #expect(boundAtReady.value == true)

        #expect(cluster.stopQuery(SIGTERM) == 0)
        #expect(await eventually { notify.messages.last?.isStopping == true })
        Self.checkLifecycle(notify.messages)
        #expect(cluster.stopWorker(SIGTERM) == 0)
    }

    @Test("with CURVE on, the ZAP handler checks in too: a secured worker and query process keep pinging")
    func secured() async throws {
        let cluster = try ServiceCluster()
        let keys = try TestKeys(in: cluster.directory)
        try keys.make("query", .reader)
        cluster.clientKeys = try keys.make("admin", .admin)
        cluster.workerFlags = keys.serverFlags
        cluster.queryFlags = keys.serverFlags + keys.clientFlags("query")
        let workerNotify = try NotifySocket(path: cluster.directory.appendingPathComponent("worker-notify").path)
        let queryNotify = try NotifySocket(path: cluster.directory.appendingPathComponent("query-notify").path)
        try await cluster.startWorker(
            environment: workerNotify.environment(watchdogMilliseconds: Self.watchdogMilliseconds))
        try await cluster.startQuery(
            environment: queryNotify.environment(watchdogMilliseconds: Self.watchdogMilliseconds))
        // Handshakes go through the ZAP handler meanwhile (the cluster's own admin client, the
        // query process's reader key); pings keep coming through them.
        let client = try cluster.client()
        defer { client.close() }
        _ = try await client.send(type: "AddProduct", data: Fixture.product("p1"))
        #expect(
            await eventually(within: patience) {
                workerNotify.messages.count(where: \.isWatchdog) >= 5
                    && queryNotify.messages.count(where: \.isWatchdog) >= 5
            })
        #expect(cluster.stopQuery(SIGTERM) == 0)
        #expect(cluster.stopWorker(SIGTERM) == 0)
    }

    @Test("a wedged projection loop stops the query process's WATCHDOG=1 while its query loop still answers")
    func wedgedProjectionStopsPings() async throws {
        let cluster = try ServiceCluster()
        try await cluster.startWorker()
        let notify = try Self.notifySocket(cluster)
        try await cluster.startQuery(environment: notify.environment(watchdogMilliseconds: Self.watchdogMilliseconds))
        let client = try cluster.client()
        defer { client.close() }
        _ = try await client.send(type: "AddProduct", data: Fixture.product("p0"))
        try await cluster.queryStatus(after: try await cluster.head())
        #expect(await eventually(within: patience) { notify.messages.count(where: \.isWatchdog) >= 3 })

        // The test holds the read models' write lock: the projection's next apply waits for it.
        let lock = try SQLiteWriteLock(
            path: cluster.directory.appendingPathComponent("query/readmodels-1.sqlite3").path)
        _ = try await client.send(type: "AddProduct", data: Fixture.product("p1"))
        let silent = await eventually(within: patience) {
            let lastPing = notify.messages.last(where: \.isWatchdog)?.receivedAt ?? 0
            return MonotonicClock.milliseconds() - lastPing >= Int64(Self.watchdogMilliseconds)
        }
        let statusWhileWedged = try await client.status(of: .queries)
        lock.release()
        let releasedAt = MonotonicClock.milliseconds()
        #expect(silent, "WATCHDOG=1 kept coming while the projection was stuck: \(notify.messages.map(\.text))")
        #expect(statusWhileWedged["checkpoint"] == 1, "the query loop answered from where the projection stopped")
        #expect(
            await eventually(within: patience) {
                notify.messages.count { $0.isWatchdog && $0.receivedAt > releasedAt } >= 2
            })
        try await cluster.queryStatus(after: try await cluster.head())
        #expect(cluster.stderr(of: "query").contains("loop=projection"), "\(cluster.stderr(of: "query"))")
        #expect(cluster.stopQuery(SIGTERM) == 0)
        #expect(cluster.stopWorker(SIGTERM) == 0)
    }

    @Test(
        "a socket that cannot be bound: no READY=1, exit status 3",
        arguments: ["worker: log", "worker: commands", "query: queries"])
    func noReadyWhenASocketIsTaken(_ which: String) async throws {
        let cluster = try ServiceCluster()
        let role = String(which.prefix { $0 != ":" })
        let endpoint =
            switch which {
            case "worker: log": cluster.log
            case "worker: commands": cluster.commands
            default: cluster.queries
            }
        let held = try #require(takePort(endpoint), "the test could not take \(endpoint)")
        defer { close(held) }
        let notify = try Self.notifySocket(cluster)
        let process = try cluster.launch(
            ["run", role, "--data-dir", cluster.directory.appendingPathComponent(role).path], role,
            environment: notify.environment(watchdogMilliseconds: Self.watchdogMilliseconds))
        let ended = await eventually(within: patience) { !process.isRunning }
        if !ended { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        #expect(ended && process.terminationStatus == 3, "\(cluster.stderr(of: role))")
        #expect(cluster.stderr(of: role).contains("Address already in use"), "\(cluster.stderr(of: role))")
        // The datagram socket is read every 50 ms; anything sent before the exit is read by now.
        #expect(await eventually(within: .milliseconds(300)) { !notify.messages.isEmpty } == false)
        #expect(notify.messages.map(\.text) == [])
    }

    @Test(
        "a wedged commit stage stops WATCHDOG=1 while the log-read loop and Status still answer; pings resume once it moves"
    )
    func wedgedLoopStopsPings() async throws {
        let cluster = try ServiceCluster()
        let notify = try Self.notifySocket(cluster)
        try await cluster.startWorker(environment: notify.environment(watchdogMilliseconds: Self.watchdogMilliseconds))
        #expect(await eventually(within: patience) { notify.messages.count(where: \.isWatchdog) >= 3 })

        // The test holds the log's write lock: the commit stage's append waits for it
        // (SQLite's busy timeout is 5 s), and the stage cannot check in meanwhile (the command
        // loop, which only hands it batches, still does).
        let lock = try SQLiteWriteLock(path: cluster.eventLogPath)
        let writer = try cluster.client(timeout: .seconds(30), attempts: 1)
        defer { writer.close() }
        let sent = Task { try await writer.send(type: "RegisterUser", data: Fixture.user("wedged")) }
        // A silence as long as the watchdog interval: systemd would restart the process now.
        let silent = await eventually(within: patience) {
            let lastPing = notify.messages.last(where: \.isWatchdog)?.receivedAt ?? 0
            return MonotonicClock.milliseconds() - lastPing >= Int64(Self.watchdogMilliseconds)
        }
        // The process is not stopped as a whole: its log-read loop answers while the commit stage
        // waits, and so does Status on the commands socket (its head comes through the command
        // loop's own connection, not the stage's, which waits for the lock).
        let headWhileWedged = try await cluster.head()
        let statusClient = try cluster.client(timeout: .seconds(5), attempts: 1)
        defer { statusClient.close() }
        let statusWhileWedged = try await statusClient.status(of: .commands)
        let pingsWhileLocked = notify.messages.count(where: \.isWatchdog)
        lock.release()
        let releasedAt = MonotonicClock.milliseconds()
        #expect(silent, "WATCHDOG=1 kept coming while the commit stage was stuck: \(notify.messages.map(\.text))")
        #expect(headWhileWedged == 0)
        #expect(statusWhileWedged["head"] == .int(0))
        #expect(statusWhileWedged["role"] == .string("worker"))

        // The command went through once the lock was released, and the pings came back.
        let receipt = try await sent.value
        #expect(receipt.events.count == 2)
        #expect(
            await eventually(within: patience) {
                notify.messages.count { $0.isWatchdog && $0.receivedAt > releasedAt } >= 2
            })
        #expect(notify.messages.count(where: \.isWatchdog) > pingsWhileLocked)
        let stderr = cluster.stderr(of: "worker")
        #expect(stderr.contains("msg=\"serving loop silent: watchdog pings withheld\" loop=commits"), "\(stderr)")
        #expect(stderr.contains("msg=\"serving loop checked in again\" loop=commits"), "\(stderr)")
        #expect(notify.messages.contains { $0.text == "STATUS=the commits loop is silent: watchdog pings withheld" })
        #expect(cluster.stopWorker(SIGTERM) == 0)
    }

    @Test(
        "feed process (PostgreSQL): READY=1 once feed, log and hints are bound; WATCHDOG=1 repeats; STOPPING=1",
        .enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.skipReason)))
    func feedLifecycle() async throws {
        let cluster = try PostgresCluster()
        let endpoints = [cluster.feed, cluster.feedLog, cluster.hints]
        let boundAtReady = Shared<[Bool]>([])
        let notify = try NotifySocket(path: cluster.directory.appendingPathComponent("notify").path) { message in
            if message.isReady { boundAtReady.update { $0 = endpoints.map(isListening) } }
        }
        try await cluster.startFeed(environment: notify.environment(watchdogMilliseconds: Self.watchdogMilliseconds))
        #expect(await eventually(within: patience) { notify.messages.count(where: \.isWatchdog) >= 3 })
        #expect(boundAtReady.value == [true, true, true])
        #expect(cluster.stop("feed") == 0)
        #expect(await eventually { notify.messages.last?.isStopping == true })
        Self.checkLifecycle(notify.messages)
    }

    @Test("without NOTIFY_SOCKET the process says nothing of systemd, even with WATCHDOG_USEC set")
    func unsupervised() async throws {
        let cluster = try ServiceCluster()
        try await cluster.startWorker(environment: ["WATCHDOG_USEC": "1000000"])
        #expect(cluster.stopWorker(SIGTERM) == 0)
        #expect(!cluster.stderr(of: "worker").contains("supervised by systemd"))
    }
}
