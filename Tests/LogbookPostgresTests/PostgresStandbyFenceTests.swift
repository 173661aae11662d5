import Foundation
import LogbookApplication
import LogbookPostgres
import LogbookTestSupport
import Synchronization
import Testing

/// What a failover may take back, and that readers are never given it: a primary with one
/// synchronous standby (`scripts/test-postgres-pair.sh`), an append whose wait for the
/// standby is cut short (its backend terminated while the standby is down), so its events
/// are visible on the primary and nowhere else; then the primary lost and the standby
/// promoted, as a failover manager in synchronous mode does. Every blocking step (servers,
/// the stores' calls) runs off Swift concurrency's pool (`offThePool`), which the other
/// tests running meanwhile need.
@Suite(
    "PostgreSQL reads wait for the synchronous standby",
    .enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresStandbyFenceTests {
    /// Appends `commandId` while the standby is down, and terminates the append's backend
    /// while it waits for the standby: committed on the primary, on no standby. Answers
    /// what the append returned.
    private static func appendCutShort(
        _ commandId: String, _ store: PostgresEventStore, _ pair: PostgresPair, by cut: String = "pg_terminate_backend"
    ) async throws -> Result<[AppendResult], EventStoreError> {
        try await offThePool {
            try pair.run("stop-standby")
            let outcome = Mutex<Result<[AppendResult], EventStoreError>?>(nil)
            let finished = DispatchSemaphore(value: 0)
            Thread {
                let result = Result { () throws(EventStoreError) in
                    try store.append([Requests.simple(commandId, stream: "a-1")])
                }
                outcome.withLock { $0 = result }
                finished.signal()
            }.start()
            let admin = try RawPostgres(pair.admin(pair.primaryPort))
            let waiting = "SELECT pid FROM pg_stat_activity WHERE datname = 'logbook' AND wait_event = 'SyncRep'"
            var backends: [[String]] = []
            for _ in 0..<2_000 where backends.isEmpty {
                backends = try admin.run(waiting)
                if backends.isEmpty { usleep(10_000) }
            }
            guard let backend = backends.first?.first else {
                throw PostgresTestError("the append never waited for the standby")
            }
            try admin.run(
                cut == "pg_terminate_backend" ? "SELECT \(cut)(\(backend), 10000)" : "SELECT \(cut)(\(backend))")
            finished.wait()
            guard let result = outcome.withLock({ $0 }) else { throw PostgresTestError("the append did not finish") }
            return result
        }
    }

    /// A store reading the pair's standby (`url`, by default as the superuser) as a replica of
    /// the primary (`--read-store`), opened once the standby has replayed the log's schema,
    /// which a store on the primary made.
    private static func replicaReader(_ pair: PostgresPair, url given: String? = nil) async throws
        -> PostgresEventStore
    {
        let url = given ?? pair.admin(pair.standbyPort, database: "logbook")
        return try await offThePool {
            for _ in 1..<300 {
                if let store = try? PostgresEventStore(connectionString: url, primary: pair.url) { return store }
                usleep(100_000)
            }
            return try PostgresEventStore(connectionString: url, primary: pair.url)
        }
    }

    /// Expects `store`'s read to fail `unavailable`, saying `reason`.
    private static func expectUnavailable(_ store: PostgresEventStore, saying reason: String) async {
        await #expect {
            try await read(store)
        } throws: { error in
            guard case .unavailable(let message, _)? = error as? EventStoreError else { return false }
            return message.contains(reason)
        }
    }

    /// The events `store` reads from position 1, or why it refused.
    private static func read(_ store: PostgresEventStore) async throws -> [RecordedEvent] {
        try await offThePool { try store.read(fromPosition: 1, limit: 100, categories: nil) }
    }

    /// Appends `commandId` to stream a-1 through `store`, answering what the append returned.
    private static func append(_ commandId: String, _ store: PostgresEventStore) async throws -> [AppendResult] {
        try await offThePool { try store.append([Requests.simple(commandId, stream: "a-1")]) }
    }

    /// Appends `commandId` again until the store answers (a new primary may still be
    /// starting, a standby catching up), at most `tries` times.
    /// What a commit cut short on its wait for the standby (`outcome`, of command `c2`, the
    /// log's second event) must give: `unavailable` after the server's warning, though the
    /// primary alone holds it; then, with the standby started again, the client's retry is
    /// answered from the record, which the standby now holds.
    private static func expectWarnedThenAnsweredOnRetry(
        _ outcome: Result<[AppendResult], EventStoreError>, _ writer: PostgresEventStore, _ pair: PostgresPair,
        _ unacknowledged: String
    ) async throws {
        guard case .failure(.unavailable(let message, _)) = outcome else {
            Issue.record("\(unacknowledged), got \(outcome)")
            return
        }
        #expect(message.contains("warned"))
        let primary = pair.admin(pair.primaryPort, database: "logbook")
        #expect(
            try await RawPostgres.rows(primary, "SELECT count(*) FROM events") == [["2"]],
            "committed on the primary alone")
        try await offThePool { try pair.run("start-standby") }
        let retried = try await appendUntilAnswered("c2", writer)
        guard case .duplicate(.appended(let record))? = retried.first else {
            Issue.record("the retry should be answered from the record, got \(retried)")
            return
        }
        #expect(record.events.map(\.position) == [2])
    }

    private static func appendUntilAnswered(
        _ commandId: String, _ store: PostgresEventStore, tries: Int = 100
    ) async throws -> [AppendResult] {
        try await offThePool {
            for _ in 1..<tries {
                if let results = try? store.append([Requests.simple(commandId, stream: "a-1")]) { return results }
                usleep(100_000)
            }
            return try store.append([Requests.simple(commandId, stream: "a-1")])
        }
    }

    /// Reads through `store` until it answers (a standby catching up), at most `tries` times.
    private static func readUntilAnswered(_ store: PostgresEventStore, tries: Int = 100) async throws
        -> [RecordedEvent]
    {
        try await offThePool {
            for _ in 1..<tries {
                if let events = try? store.read(fromPosition: 1, limit: 100, categories: nil), !events.isEmpty {
                    return events
                }
                usleep(100_000)
            }
            return try store.read(fromPosition: 1, limit: 100, categories: nil)
        }
    }

    @Test("an event the primary shows but no standby has is never read, and is gone after the failover")
    func unreplicatedEventsAreNeverRead() async throws {
        let pair = try await offThePool { try PostgresPair() }
        let writer = try await offThePool { try PostgresEventStore(connectionString: pair.url) }
        let reader = try await offThePool { try PostgresEventStore(connectionString: pair.url) }
        // Every event any read returned, by position: a subscriber's view of the log.
        var seen: [Int64: String] = [:]
        func note(_ events: [RecordedEvent]) {
            for event in events {
                #expect(seen[event.position] == nil || seen[event.position] == event.eventId)
                seen[event.position] = event.eventId
            }
        }

        _ = try await Self.append("c1", writer)
        note(try await Self.read(reader))
        #expect(seen.count == 1)

        guard case .failure(.unavailable) = try await Self.appendCutShort("c2", writer, pair) else {
            Issue.record("an append whose connection died while it waited should be unavailable")
            return
        }
        // The danger: the primary shows the event to anyone who reads it there.
        let primary = pair.admin(pair.primaryPort, database: "logbook")
        let visible = try await RawPostgres.rows(primary, "SELECT position, event_id FROM events ORDER BY position")
        #expect(visible.count == 2, "the cut-short commit is visible on the primary")
        let doomed = visible.last?[1]
        // The store's reads wait for the standby, which never gets it, and fail.
        await #expect(throws: EventStoreError.self) { note(try await Self.read(reader)) }
        await #expect(throws: EventStoreError.self) { try await offThePool { try reader.headPosition() } }

        // The primary is lost with it; the standby is promoted.
        try await offThePool {
            try pair.run("kill-primary")
            try pair.run("promote-standby")
        }
        let committed = try await Self.appendUntilAnswered("c3", writer, tries: 50)
        #expect(committed.first?.committed?.lastPosition == 2, "the new primary's log holds another event at 2")
        #expect(try await offThePool { try writer.commandRecord("c2") } == nil, "the cut-short command is gone")
        note(try await Self.read(reader))

        let log = try await Self.read(writer)
        #expect(log.count == 2)
        for event in log {
            #expect(seen[event.position] == event.eventId, "read at \(event.position) as the log holds it")
        }
        #expect(!seen.values.contains { $0 == doomed }, "the event the failover took back was never read")
    }

    @Test("a commit whose wait for the standby is cancelled is not acknowledged; its retry is, once the standby has it")
    func cancelledWaitIsNotAcknowledged() async throws {
        let pair = try await offThePool { try PostgresPair() }
        let writer = try await offThePool { try PostgresEventStore(connectionString: pair.url) }
        _ = try await Self.append("c1", writer)
        // A cancel, unlike a terminated backend, lets the commit return success, with a warning.
        let outcome = try await Self.appendCutShort("c2", writer, pair, by: "pg_cancel_backend")
        try await Self.expectWarnedThenAnsweredOnRetry(
            outcome, writer, pair, "a commit whose standby wait was cancelled must not be acknowledged")
    }

    @Test("an append no standby acknowledges is answered unavailable once its patience runs out")
    func appendWithNoStandbyEnds() async throws {
        let pair = try await offThePool { try PostgresPair() }
        let writer = try await offThePool {
            try PostgresEventStore(connectionString: pair.url, commitPatience: .milliseconds(500))
        }
        _ = try await Self.append("c1", writer)
        try await offThePool { try pair.run("stop-standby") }
        // Without the patience the commit waits for the standby for ever: give it far longer.
        let outcome = Mutex<Result<[AppendResult], EventStoreError>?>(nil)
        let finished = DispatchSemaphore(value: 0)
        Thread {
            let result = Result { () throws(EventStoreError) in
                try writer.append([Requests.simple("c2", stream: "a-1")])
            }
            outcome.withLock { $0 = result }
            finished.signal()
        }.start()
        let ended = try await offThePool { finished.wait(timeout: .now() + 120) == .success }
        guard ended, let result = outcome.withLock({ $0 }) else {
            Issue.record("the append still waited for the standby after two minutes")
            try await offThePool {
                try pair.run("start-standby")
                finished.wait()
            }
            return
        }
        try await Self.expectWarnedThenAnsweredOnRetry(
            result, writer, pair, "a commit no standby acknowledged must not be acknowledged")
    }

    @Test("a read held back by a standby that is down returns once the standby has caught up")
    func readsResumeWhenTheStandbyCatchesUp() async throws {
        let pair = try await offThePool { try PostgresPair() }
        let writer = try await offThePool { try PostgresEventStore(connectionString: pair.url) }
        let reader = try await offThePool { try PostgresEventStore(connectionString: pair.url) }
        _ = try await Self.append("c1", writer)
        _ = try await Self.appendCutShort("c2", writer, pair)
        await Self.expectUnavailable(reader, saying: "synchronous standby")
        try await offThePool { try pair.run("start-standby") }
        let events = try await Self.readUntilAnswered(reader)
        #expect(events.map(\.position) == [1, 2], "the cut-short commit is safe once the standby has it")
        #expect(try await offThePool { try reader.headPosition() } == 2)
    }

    @Test("a replica's reads wait for the primary's synchronous standbys, whatever the replica itself has")
    func replicaReadsWaitForThePrimarysStandbys() async throws {
        let pair = try await offThePool { try PostgresPair() }
        let primaryAdmin = pair.admin(pair.primaryPort)
        let writer = try await offThePool {
            try PostgresEventStore(connectionString: pair.url, commitPatience: .milliseconds(500))
        }
        // The standby as a `--read-store`: a replica read from, its primary asked about the standbys.
        let replicaURL = pair.admin(pair.standbyPort, database: "logbook")
        let reader = try await Self.replicaReader(pair)
        _ = try await Self.append("c1", writer)
        #expect(try await Self.readUntilAnswered(reader).map(\.position) == [1])

        // The replica stops being the synchronous standby (another one is named, never
        // connected): it still streams, asynchronously, so it gets commits no synchronous
        // standby has.
        try await RawPostgres.configure(primaryAdmin, "ALTER SYSTEM SET synchronous_standby_names = 'elsewhere'")
        let state = try await RawPostgres.rows(
            primaryAdmin, "SELECT sync_state FROM pg_stat_replication", once: [["async"]])
        #expect(state == [["async"]], "the replica streams asynchronously")
        let outcome = try await offThePool {
            Result { () throws(EventStoreError) in try writer.append([Requests.simple("c2", stream: "a-1")]) }
        }
        guard case .failure(.unavailable) = outcome else {
            Issue.record("a commit no synchronous standby acknowledged must not be acknowledged, got \(outcome)")
            return
        }
        // The danger: the replica shows it.
        let onReplica = try await RawPostgres.rows(replicaURL, "SELECT count(*) FROM events", once: [["2"]])
        #expect(onReplica == [["2"]], "the replica shows the commit no synchronous standby has")
        // The store reading the replica does not.
        await Self.expectUnavailable(reader, saying: "synchronous standby")
        await #expect(throws: EventStoreError.self) { try await offThePool { try reader.headPosition() } }

        // Once the replica is the synchronous standby again, what it holds is safe.
        try await RawPostgres.configure(primaryAdmin, "ALTER SYSTEM RESET synchronous_standby_names")
        #expect(try await Self.readUntilAnswered(reader).map(\.position) == [1, 2])
    }

    @Test("a replica that does not stream from its primary is not read")
    func replicaNotStreamingIsNotRead() async throws {
        let pair = try await offThePool { try PostgresPair() }
        let writer = try await offThePool { try PostgresEventStore(connectionString: pair.url) }
        let replicaAdmin = pair.admin(pair.standbyPort)
        let reader = try await Self.replicaReader(pair)
        _ = try await Self.append("c1", writer)
        #expect(try await Self.readUntilAnswered(reader).map(\.position) == [1])
        // Cut off from its primary (its WAL receiver stopped), a replica may be on a timeline
        // a failover left behind: nothing on it is known to be the log's.
        let conninfo = try await RawPostgres.rows(replicaAdmin, "SHOW primary_conninfo").first?.first ?? ""
        try await RawPostgres.configure(replicaAdmin, "ALTER SYSTEM SET primary_conninfo = ''")
        let receivers = try await RawPostgres.rows(
            replicaAdmin, "SELECT count(*) FROM pg_stat_wal_receiver", once: [["0"]])
        #expect(receivers == [["0"]], "the replica's WAL receiver stopped")
        await Self.expectUnavailable(reader, saying: "not streaming")
        let quoted = "'" + conninfo.replacingOccurrences(of: "'", with: "''") + "'"
        try await RawPostgres.configure(replicaAdmin, "ALTER SYSTEM SET primary_conninfo = \(quoted)")
        #expect(try await Self.readUntilAnswered(reader).map(\.position) == [1])
    }
    @Test(
        "a role that cannot see the standbys' positions or the replica's receiver reads nothing, saying what to grant")
    func rolesWithoutMonitoringReadNothing() async throws {
        let pair = try await offThePool { try PostgresPair() }
        let writer = try await offThePool { try PostgresEventStore(connectionString: pair.url) }
        _ = try await Self.append("c1", writer)
        let logbook = pair.admin(pair.primaryPort, database: "logbook")
        _ = try await RawPostgres.rows(logbook, "CREATE ROLE reader LOGIN")
        _ = try await RawPostgres.rows(logbook, "GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader")
        let primaryAsReader = "postgresql://reader@127.0.0.1:\(pair.primaryPort)/logbook"
        let replicaAsReader = "postgresql://reader@127.0.0.1:\(pair.standbyPort)/logbook"
        let onPrimary = try await offThePool { try PostgresEventStore(connectionString: primaryAsReader) }
        let onReplica = try await Self.replicaReader(pair, url: replicaAsReader)
        for store in [onPrimary, onReplica] {
            await #expect {
                try await Self.read(store)
            } throws: { error in
                guard case .failed(let message)? = error as? EventStoreError else { return false }
                return message.contains("pg_monitor")
            }
        }
        _ = try await RawPostgres.rows(logbook, "GRANT pg_monitor TO reader")
        #expect(try await Self.readUntilAnswered(onPrimary).map(\.position) == [1])
        #expect(try await Self.readUntilAnswered(onReplica).map(\.position) == [1])
    }
}
