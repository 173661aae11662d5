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
/// promoted, as a failover manager in synchronous mode does.
@Suite(
    "PostgreSQL reads wait for the synchronous standby",
    .enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresStandbyFenceTests {
    /// Appends `commandId` while the standby is down, and terminates the append's backend
    /// while it waits for the standby: committed on the primary, on no standby. Answers
    /// what the append returned.
    private static func appendCutShort(
        _ commandId: String, _ store: PostgresEventStore, _ pair: PostgresPair, by cut: String = "pg_terminate_backend"
    ) throws -> Result<[AppendResult], EventStoreError> {
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
        try admin.run(cut == "pg_terminate_backend" ? "SELECT \(cut)(\(backend), 10000)" : "SELECT \(cut)(\(backend))")
        finished.wait()
        guard let result = outcome.withLock({ $0 }) else { throw PostgresTestError("the append did not finish") }
        return result
    }

    @Test("an event the primary shows but no standby has is never read, and is gone after the failover")
    func unreplicatedEventsAreNeverRead() throws {
        let pair = try PostgresPair()
        let writer = try PostgresEventStore(connectionString: pair.url)
        let reader = try PostgresEventStore(connectionString: pair.url)
        // Every event any read returned, by position: a subscriber's view of the log.
        var seen: [Int64: String] = [:]
        func read() throws(EventStoreError) {
            for event in try reader.read(fromPosition: 1, limit: 100, categories: nil) {
                #expect(seen[event.position] == nil || seen[event.position] == event.eventId)
                seen[event.position] = event.eventId
            }
        }

        _ = try writer.append([Requests.simple("c1", stream: "a-1")])
        try read()
        #expect(seen.count == 1)

        guard case .failure(.unavailable) = try Self.appendCutShort("c2", writer, pair) else {
            Issue.record("an append whose connection died while it waited should be unavailable")
            return
        }
        // The danger: the primary shows the event to anyone who reads it there.
        let primary = try RawPostgres(pair.admin(pair.primaryPort, database: "logbook"))
        let visible = try primary.run("SELECT position, event_id FROM events ORDER BY position")
        #expect(visible.count == 2, "the cut-short commit is visible on the primary")
        let doomed = visible.last?[1]
        // The store's reads wait for the standby, which never gets it, and fail.
        #expect(throws: EventStoreError.self) { try read() }
        #expect(throws: EventStoreError.self) { try reader.headPosition() }

        // The primary is lost with it; the standby is promoted.
        try pair.run("kill-primary")
        try pair.run("promote-standby")
        var committed: [AppendResult] = []
        for _ in 0..<50 where committed.first?.committed == nil {
            do {
                committed = try writer.append([Requests.simple("c3", stream: "a-1")])
            } catch {
                usleep(100_000)  // the new primary may still be starting
            }
        }
        #expect(committed.first?.committed?.lastPosition == 2, "the new primary's log holds another event at 2")
        #expect(try writer.commandRecord("c2") == nil, "the cut-short command is not in the new primary's log")
        try read()

        let log = try writer.read(fromPosition: 1, limit: 100, categories: nil)
        #expect(log.count == 2)
        for event in log {
            #expect(seen[event.position] == event.eventId, "read at \(event.position) as the log holds it")
        }
        #expect(!seen.values.contains { $0 == doomed }, "the event the failover took back was never read")
    }

    @Test("a commit whose wait for the standby is cancelled is not acknowledged; its retry is, once the standby has it")
    func cancelledWaitIsNotAcknowledged() throws {
        let pair = try PostgresPair()
        let writer = try PostgresEventStore(connectionString: pair.url)
        _ = try writer.append([Requests.simple("c1", stream: "a-1")])
        // A cancel, unlike a terminated backend, lets the commit return success, with a warning.
        let outcome = try Self.appendCutShort("c2", writer, pair, by: "pg_cancel_backend")
        guard case .failure(.unavailable(let message, _)) = outcome else {
            Issue.record("a commit whose standby wait was cancelled must not be acknowledged, got \(outcome)")
            return
        }
        #expect(message.contains("warned"))
        let primary = try RawPostgres(pair.admin(pair.primaryPort, database: "logbook"))
        #expect(try primary.run("SELECT count(*) FROM events") == [["2"]], "committed on the primary alone")
        // The client sends it again, and is answered from the record, which the standby now holds.
        try pair.run("start-standby")
        var retried: [AppendResult] = []
        for _ in 0..<100 where retried.isEmpty {
            retried = (try? writer.append([Requests.simple("c2", stream: "a-1")])) ?? []
        }
        guard case .duplicate(.appended(let record))? = retried.first else {
            Issue.record("the retry should be answered from the record, got \(retried)")
            return
        }
        #expect(record.events.map(\.position) == [2])
    }

    @Test("an append no standby acknowledges is answered unavailable once its patience runs out")
    func appendWithNoStandbyEnds() throws {
        let pair = try PostgresPair()
        let writer = try PostgresEventStore(connectionString: pair.url, commitPatience: .milliseconds(500))
        _ = try writer.append([Requests.simple("c1", stream: "a-1")])
        try pair.run("stop-standby")
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
        guard finished.wait(timeout: .now() + 120) == .success, let result = outcome.withLock({ $0 }) else {
            Issue.record("the append still waited for the standby after two minutes")
            try pair.run("start-standby")
            finished.wait()
            return
        }
        guard case .failure(.unavailable(let message, _)) = result else {
            Issue.record("a commit no standby acknowledged must not be acknowledged, got \(result)")
            return
        }
        #expect(message.contains("warned"))
        let primary = try RawPostgres(pair.admin(pair.primaryPort, database: "logbook"))
        #expect(try primary.run("SELECT count(*) FROM events") == [["2"]], "committed on the primary alone")
        try pair.run("start-standby")
        var retried: [AppendResult] = []
        for _ in 0..<100 where retried.isEmpty {
            retried = (try? writer.append([Requests.simple("c2", stream: "a-1")])) ?? []
        }
        guard case .duplicate(.appended(let record))? = retried.first else {
            Issue.record("the retry should be answered from the record, got \(retried)")
            return
        }
        #expect(record.events.map(\.position) == [2])
    }

    @Test("a read held back by a standby that is down returns once the standby has caught up")
    func readsResumeWhenTheStandbyCatchesUp() throws {
        let pair = try PostgresPair()
        let writer = try PostgresEventStore(connectionString: pair.url)
        let reader = try PostgresEventStore(connectionString: pair.url)
        _ = try writer.append([Requests.simple("c1", stream: "a-1")])
        _ = try Self.appendCutShort("c2", writer, pair)
        #expect {
            try reader.read(fromPosition: 1, limit: 100, categories: nil)
        } throws: { error in
            guard case .unavailable(let message, _)? = error as? EventStoreError else { return false }
            return message.contains("synchronous standby")
        }
        try pair.run("start-standby")
        var events: [RecordedEvent] = []
        for _ in 0..<100 where events.isEmpty {
            do {
                events = try reader.read(fromPosition: 1, limit: 100, categories: nil)
            } catch {
                // Still held back while the standby replays what it missed.
            }
        }
        #expect(events.map(\.position) == [1, 2], "the cut-short commit is safe once the standby has it")
        #expect(try reader.headPosition() == 2)
    }
}
