import Foundation
import LogbookApplication
import LogbookJSON
import LogbookPostgres
import LogbookTestSupport
import Synchronization
import Testing

/// What only the PostgreSQL log promises: it recognises its own databases, refuses bad
/// addresses in one line, and keeps positions whole and command ids unique when several
/// stores (processes) write to one database at once, when a writer dies mid-append and when
/// the server drops a connection.
@Suite(
    "PostgreSQL event store",
    .enabled(if: PostgresTestServer.isEnabled, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresEventStoreTests {
    private static func isError(_ error: any Error, _ match: (EventStoreError) -> Bool) -> Bool {
        guard let error = error as? EventStoreError else { return false }
        return match(error)
    }

    /// A new database, a raw connection to it and a store on it.
    private static func openLog() throws -> (PostgresTestDatabase, RawPostgres, PostgresEventStore) {
        let database = try PostgresTestDatabase()
        return (
            database, try RawPostgres(database.connectionString),
            try PostgresEventStore(connectionString: database.connectionString)
        )
    }

    /// The server processes serving stores (libpq connections named "logbook") on `database`.
    private static func storeBackends(_ database: PostgresTestDatabase, _ admin: RawPostgres) throws -> [String] {
        try admin.run(
            "SELECT pid FROM pg_stat_activity WHERE datname = '\(database.name)' AND application_name = 'logbook'"
        ).map { $0[0] }
    }

    /// Waits until `count` backends on `database` wait for a lock (at most 20 s).
    private static func waitForLockWaiters(_ count: Int, _ database: PostgresTestDatabase, _ admin: RawPostgres) throws
    {
        for _ in 0..<2_000 {
            let waiting = try admin.run(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = '\(database.name)' AND wait_event_type = 'Lock'")
            if Int(waiting[0][0]) ?? 0 >= count { return }
            usleep(10_000)
        }
        throw PostgresTestError("\(count) appends never waited for a lock")
    }

    @Test("another program's database is refused and left untouched")
    func foreignDatabaseRefused() throws {
        let database = try PostgresTestDatabase()
        let raw = try RawPostgres(database.connectionString)
        try raw.run("CREATE TABLE notes (id integer PRIMARY KEY, body text)")
        #expect {
            _ = try PostgresEventStore(connectionString: database.connectionString)
        } throws: { error in
            Self.isError(error) {
                guard case .notAnEventLog(let target, let reason) = $0 else { return false }
                return target.contains(database.name) && reason.contains("another program")
            }
        }
        #expect(try raw.run("SELECT to_regclass('events') IS NULL, count(*) FROM notes") == [["t", "0"]])
    }

    @Test("a log written by a newer schema version is refused")
    func newerSchemaRefused() throws {
        let database = try PostgresTestDatabase()
        _ = try PostgresEventStore(connectionString: database.connectionString)
        try RawPostgres(database.connectionString).run("UPDATE logbook_schema SET version = 99")
        #expect(throws: EventStoreError.unsupportedSchema(found: 99, supported: 3)) {
            _ = try PostgresEventStore(connectionString: database.connectionString)
        }
    }

    @Test("a bad address is a one-line error naming the database, never the password, and no crash")
    func badAddresses() throws {
        let database = try PostgresTestDatabase()
        let cases: [(String, (EventStoreError) -> Bool)] = [
            ("host=127.0.0.1 port", { if case .invalidRequest = $0 { true } else { false } }),
            ("postgresql://[::1", { if case .invalidRequest = $0 { true } else { false } }),
            ("nonsense", { if case .invalidRequest = $0 { true } else { false } }),
            (
                "host=127.0.0.1 port=1 dbname=x password=sesame connect_timeout=2",
                { if case .unavailable = $0 { true } else { false } }
            ),
            (
                database.connectionString + " dbname=no_such_database password=sesame",
                { if case .unavailable(let message, _) = $0 { message.contains("no_such_database") } else { false } }
            ),
            (
                database.connectionString + " user=no_such_role password=sesame",
                { if case .unavailable(let message, _) = $0 { message.contains("no_such_role") } else { false } }
            ),
        ]
        for (address, expected) in cases {
            #expect {
                _ = try PostgresEventStore(connectionString: address)
            } throws: { error in
                let text = "\(error)"
                return Self.isError(error, expected) && !text.contains("\n") && !text.contains("sesame")
            }
        }
    }

    @Test("many openers of one new database at the same moment create the schema once and agree")
    func concurrentFirstOpen() throws {
        for trial in 0..<3 {
            let database = try PostgresTestDatabase()
            let errors = onThreads(6) { writer in
                let store = try PostgresEventStore(connectionString: database.connectionString)
                _ = try store.append([Requests.simple("t\(trial)-w\(writer)", stream: "s-\(writer)")])
            }
            #expect(errors.isEmpty, "trial \(trial): \(errors)")
            let store = try PostgresEventStore(connectionString: database.connectionString)
            #expect(try store.read(fromPosition: 1, limit: 100, categories: nil).map(\.position) == [1, 2, 3, 4, 5, 6])
            #expect(
                try RawPostgres(database.connectionString).run("SELECT version, application FROM logbook_schema")
                    == [["3", "logbook event log"]])
        }
    }

    @Test("two stores on one database, several threads each, give positions 1…N and whole stream versions")
    func twoStoresManyThreads() throws {
        let database = try PostgresTestDatabase()
        let stores = [
            try PostgresEventStore(connectionString: database.connectionString),
            try PostgresEventStore(connectionString: database.connectionString),
        ]
        let reader = try PostgresEventStore(connectionString: database.connectionString)
        let done = Atomic(false)
        let prefixViolations = Mutex<[String]>([])
        // A reader beside the writers: every read of the log must be 1, 2, 3 … with no gap.
        let readerStopped = DispatchSemaphore(value: 0)
        Thread {
            defer { readerStopped.signal() }
            while !done.load(ordering: .acquiring) {
                guard let seen = try? reader.read(fromPosition: 1, limit: 100_000, categories: nil) else { continue }
                if seen.map(\.position) != (0..<seen.count).map({ Int64($0 + 1) }) {
                    prefixViolations.withLock { $0.append("saw \(seen.map(\.position))") }
                }
            }
        }.start()
        let errors = onThreads(6) { writer in
            for n in 0..<20 {
                let stream = "s-\(n % 4)"
                let batch = [
                    Requests.simple("w\(writer)-\(n)-a", stream: stream, count: 2),
                    Requests.request(
                        "w\(writer)-\(n)-b", [Requests.event("t-\(writer)"), Requests.event(stream)]),
                ]
                let results = try stores[writer % 2].append(batch)
                #expect(results.allSatisfy { $0.committed != nil }, "\(results)")
            }
        }
        done.store(true, ordering: .releasing)
        #expect(errors.isEmpty, "\(errors)")
        let all = try reader.read(fromPosition: 1, limit: 100_000, categories: nil)
        #expect(all.map(\.position) == (1...Int64(6 * 20 * 4)).map { $0 })
        for stream in Set(all.map(\.stream)) {
            let versions = all.filter { $0.stream == stream }.map(\.version)
            #expect(versions == Array(1...versions.count), "\(stream)")
        }
        #expect(try reader.headPosition() == 480)
        readerStopped.wait()
        #expect(prefixViolations.withLock { $0 }.isEmpty)
    }

    @Test("the same command id sent by two stores at the same moment appends once, and both answers agree")
    func sameCommandFromTwoStores() throws {
        let database = try PostgresTestDatabase()
        let admin = try RawPostgres(database.connectionString)
        let stores = [
            try PostgresEventStore(connectionString: database.connectionString),
            try PostgresEventStore(connectionString: database.connectionString),
        ]
        for round in 0..<5 {
            // Hold the head so that both appends are in flight together: one waits for the
            // head, the other for the first one's claim on the command id.
            try admin.run("BEGIN; SELECT position FROM log_head FOR UPDATE")
            let answers = Mutex<[Int: AppendResult]>([:])
            let group = DispatchGroup()
            for index in 0..<2 {
                group.enter()
                Thread {
                    defer { group.leave() }
                    let request = Requests.request(
                        "same-\(round)", [Requests.event("a-\(round)"), Requests.event("b-\(round)")],
                        expecting: ["a-\(round)": .noStream])
                    if let result = try? stores[index].append([request]).first {
                        answers.withLock { $0[index] = result }
                    }
                }.start()
                if index == 0 { try Self.waitForLockWaiters(1, database, admin) }
            }
            try Self.waitForLockWaiters(2, database, admin)
            try admin.run("COMMIT")
            group.wait()
            let results = answers.withLock { $0 }
            let committed = results.values.compactMap(\.committed)
            let duplicates = results.values.compactMap(\.duplicate)
            #expect(committed.count == 1 && duplicates.count == 1, "round \(round): \(results)")
            #expect(duplicates.first == committed.first.map { .appended($0) }, "round \(round)")
        }
        let log = try stores[0].read(fromPosition: 1, limit: 100, categories: nil)
        #expect(log.map(\.position) == Array(1...10))
        #expect(try admin.run("SELECT count(*) FROM command_claims") == [["0"]])
    }

    @Test("an append sent ahead leaves stream and command reads free while it waits, and answers as append does")
    func sentAhead() throws {
        // Given a log with one command, and the head row held so that the next append waits
        let (database, admin, store) = try Self.openLog()
        #expect(store.sendsAhead)
        _ = try store.append([Requests.simple("c1", stream: "a-1", count: 2)])
        try admin.run("BEGIN; SELECT position FROM log_head FOR UPDATE")
        // When an append is sent, and is in flight at the server
        let inFlight = try store.send([Requests.request("c2", [Requests.event("a-1")], expecting: ["a-1": .at(2)])])
        try Self.waitForLockWaiters(1, database, admin)
        // Then the reads a worker decides with go on meanwhile, and see only what committed
        #expect(try store.readWholeStream("a-1").map(\.version) == [1, 2])
        #expect(try store.readWholeStreams(["a-1", "b-1"]).mapValues(\.count) == ["a-1": 2, "b-1": 0])
        #expect(try store.commandRecord("c1") != nil)
        #expect(try store.commandRecord("c2") == nil)
        // And once the head is free its results are what append answers
        try admin.run("COMMIT")
        let results = try inFlight.results()
        #expect(results.count == 1)
        #expect(results.first?.committed?.events.map(\.position) == [3])
        // And the store appends on as before
        let next = try store.append([Requests.request("c3", [Requests.event("a-1")], expecting: ["a-1": .at(3)])])
        #expect(next.first?.committed?.events.map(\.position) == [4])
        #expect(try store.read(fromPosition: 1, limit: 10, categories: nil).map(\.position) == [1, 2, 3, 4])
    }

    @Test("an append whose connection is killed mid-transaction leaves no hole and no trace")
    func killedAppendLeavesNoHole() throws {
        let (database, admin, store) = try Self.openLog()
        _ = try store.append([Requests.simple("c1", stream: "a-1", count: 2)])
        try admin.run("BEGIN; SELECT position FROM log_head FOR UPDATE")
        let outcome = Mutex<Result<[AppendResult], EventStoreError>?>(nil)
        let finished = DispatchSemaphore(value: 0)
        Thread {
            let result = Result { () throws(EventStoreError) in
                try store.append([Requests.simple("doomed", stream: "a-1", count: 3)])
            }
            outcome.withLock { $0 = result }
            finished.signal()
        }.start()
        try Self.waitForLockWaiters(1, database, admin)
        try admin.run(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(database.name)' "
                + "AND wait_event_type = 'Lock'")
        finished.wait()
        try admin.run("COMMIT")
        guard case .failure(.unavailable)? = outcome.withLock({ $0 }) else {
            Issue.record("the killed append should be unavailable, got \(String(describing: outcome.withLock { $0 }))")
            return
        }
        // A writer that bumped the head and rolled back leaves no hole either.
        try admin.run("BEGIN; UPDATE log_head SET position = position + 5; ROLLBACK")

        let next = try store.append([Requests.request("c2", [Requests.event("a-1")], expecting: ["a-1": .exactly(2)])])
        #expect(next.first?.committed?.events.map { [$0.position, Int64($0.version)] } == [[3, 3]])
        #expect(try store.commandRecord("doomed") == nil)
        #expect(try store.read(fromPosition: 1, limit: 100, categories: nil).map(\.position) == [1, 2, 3])
        #expect(try admin.run("SELECT count(*) FROM command_claims") == [["0"]])
    }

    @Test("a connection the server closed while it was idle is replaced before the next call, which succeeds")
    func reconnectsAfterADroppedConnection() throws {
        let (database, admin, store) = try Self.openLog()
        _ = try store.append([Requests.simple("c1", stream: "a-1")])
        let backends = try Self.storeBackends(database, admin)
        #expect(backends.count == 1)
        // Waits until the backend is gone, so its connection is closed before the next call.
        #expect(try admin.run("SELECT pg_terminate_backend(\(backends[0]), 10000)") == [["t"]])
        #expect(try store.headPosition() == 1)
        #expect(try store.append([Requests.simple("c2", stream: "a-1")]).first?.committed?.lastPosition == 2)
        #expect(try Self.storeBackends(database, admin).count == 1)
        #expect(try store.append([Requests.simple("c1", stream: "a-1")]).first?.duplicate != nil)
    }

    @Test("the database refuses TRUNCATE, upserts over events, and moving the head or a stream backwards")
    func databaseRefusesRewrites() throws {
        let database = try PostgresTestDatabase()
        let store = try PostgresEventStore(connectionString: database.connectionString)
        _ = try store.append([Requests.simple("c1", stream: "a-1", count: 2), Requests.answer("c2")])
        let before = try store.read(fromPosition: 1, limit: 10, categories: nil)
        let attempts = [
            "TRUNCATE events", "TRUNCATE commands", "TRUNCATE events, commands CASCADE",
            "INSERT INTO events SELECT * FROM events WHERE position = 1 ON CONFLICT (position) DO UPDATE SET data = '{}'",
            "UPDATE log_head SET position = 0", "DELETE FROM log_head", "UPDATE streams SET version = 1",
            "DELETE FROM streams",
        ]
        for sql in attempts {
            let result = RawSQLResult(postgres: database.connectionString, sql: sql)
            #expect(!result.succeeded, "\(sql) should be refused")
        }
        #expect(try store.read(fromPosition: 1, limit: 10, categories: nil) == before)
        #expect(try store.headPosition() == 2)
        #expect(try store.commandRecord("c2") == .answered(commandId: "c2", position: 2, answer: #"{"ok":true}"#))
    }

    /// An event row for a raw `INSERT INTO events VALUES …`, as a writer bypassing the store would write it.
    private static func eventRow(_ position: Int, _ stream: String, _ version: Int, _ command: String) -> String {
        let category = stream.split(separator: "-").first.map(String.init) ?? stream
        return "(\(position), 'raw-\(position)-\(version)', '\(stream)', '\(category)', \(version), 'Happened', "
            + "'{}', '\(command)', '\(command)', '\(command)', 0, 1)"
    }

    /// Runs `sql` in a transaction of its own on a connection of its own, as a raw session would.
    private static func rawTransaction(_ database: PostgresTestDatabase, _ sql: String) -> RawSQLResult {
        RawSQLResult(postgres: database.connectionString, sql: "BEGIN; \(sql); COMMIT")
    }

    @Test("the database refuses, from any writer, an event that leaves a hole in positions or stream versions")
    func holesRefusedByDatabase() throws {
        let (database, _, store) = try Self.openLog()
        _ = try store.append([Requests.simple("c1", stream: "a-1", count: 2), Requests.answer("c2")])
        // Each writer moves the head and the stream's row along, as it must; only the hole is wrong.
        let positions = "events must be appended at the next positions without holes"
        let versions = "events must be appended at the next versions of their stream without holes"
        let attempts: [(String, String, String)] = [
            (
                "a position hole",
                "UPDATE log_head SET position = 4; UPDATE streams SET version = 3 WHERE stream = 'a-1'; "
                    + "INSERT INTO events VALUES \(Self.eventRow(4, "a-1", 3, "x1"))",
                positions
            ),
            (
                "a position hole inside one statement",
                "UPDATE log_head SET position = 5; UPDATE streams SET version = 4 WHERE stream = 'a-1'; "
                    + "INSERT INTO events VALUES \(Self.eventRow(3, "a-1", 3, "x1")), \(Self.eventRow(5, "a-1", 4, "x1"))",
                positions
            ),
            (
                "a position below the head's",
                "UPDATE log_head SET position = 3; UPDATE streams SET version = 3 WHERE stream = 'a-1'; "
                    + "INSERT INTO events VALUES \(Self.eventRow(2, "a-1", 3, "x1"))",
                "duplicate key value"
            ),
            (
                "an event without moving the head",
                "UPDATE streams SET version = 3 WHERE stream = 'a-1'; "
                    + "INSERT INTO events VALUES \(Self.eventRow(3, "a-1", 3, "x1"))",
                positions
            ),
            (
                "the head moved without an event",
                "UPDATE log_head SET position = 3",
                "the log head must be the last event's position"
            ),
            (
                "a version hole",
                "UPDATE log_head SET position = 3; UPDATE streams SET version = 4 WHERE stream = 'a-1'; "
                    + "INSERT INTO events VALUES \(Self.eventRow(3, "a-1", 4, "x1"))",
                versions
            ),
            (
                "a new stream that does not start at version 1",
                "UPDATE log_head SET position = 3; INSERT INTO streams VALUES ('b-1', 2); "
                    + "INSERT INTO events VALUES \(Self.eventRow(3, "b-1", 2, "x1"))",
                versions
            ),
            (
                "versions out of position order",
                "UPDATE log_head SET position = 4; UPDATE streams SET version = 4 WHERE stream = 'a-1'; "
                    + "INSERT INTO events VALUES \(Self.eventRow(3, "a-1", 4, "x1")), \(Self.eventRow(4, "a-1", 3, "x1"))",
                versions
            ),
            (
                "an event without moving its stream's row",
                "UPDATE log_head SET position = 3; INSERT INTO events VALUES \(Self.eventRow(3, "a-1", 3, "x1"))",
                versions
            ),
        ]
        for (name, sql, message) in attempts {
            let result = Self.rawTransaction(database, sql)
            #expect(!result.succeeded && result.message.contains(message), "\(name): \(result.message)")
        }
        #expect(try store.read(fromPosition: 1, limit: 10, categories: nil).map(\.position) == [1, 2])
        #expect(try store.headPosition() == 2)

        // A raw writer that follows the rules is let through, and the store carries on after it.
        let lawful = Self.rawTransaction(
            database,
            "UPDATE log_head SET position = 4; UPDATE streams SET version = 3 WHERE stream = 'a-1'; "
                + "INSERT INTO streams VALUES ('b-1', 1); "
                + "INSERT INTO events VALUES \(Self.eventRow(3, "a-1", 3, "x1")), \(Self.eventRow(4, "b-1", 1, "x1")); "
                + "INSERT INTO commands VALUES ('x1', 3, 4, NULL)")
        #expect(lawful.succeeded, "\(lawful.message)")
        let next = try store.append([Requests.request("c3", [Requests.event("a-1")], expecting: ["a-1": .exactly(3)])])
        #expect(next.first?.committed?.events.map { [$0.position, Int64($0.version)] } == [[5, 4]])
    }

    @Test("the database refuses, from any writer, a command record that does not cover exactly its own events")
    func commandRecordsMustMatchTheirEvents() throws {
        let (database, _, store) = try Self.openLog()
        _ = try store.append([Requests.simple("a1", stream: "a-1"), Requests.simple("a2", stream: "a-1")])
        let message = "a command record must cover exactly its own events"
        /// Appends events for `commands` (one each, stream b-1, versions 1…) at positions 3…, as a raw writer.
        func events(_ commands: [String]) -> String {
            "UPDATE log_head SET position = \(2 + commands.count); INSERT INTO streams VALUES ('b-1', \(commands.count)); "
                + "INSERT INTO events VALUES "
                + commands.enumerated().map { Self.eventRow(3 + $0.offset, "b-1", 1 + $0.offset, $0.element) }
                .joined(separator: ", ") + "; "
        }
        let forged: [(String, String)] = [
            ("an answer at a stale head", "INSERT INTO commands VALUES ('z1', NULL, 1, '{\"ok\":true}')"),
            ("an answer past the head", "INSERT INTO commands VALUES ('z1', NULL, 3, '{\"ok\":true}')"),
            ("the events of a1 and a2", "INSERT INTO commands VALUES ('z2', 1, 2, NULL)"),
            ("someone else's event", "INSERT INTO commands VALUES ('a2x', 2, 2, NULL)"),
            ("fewer events than it has", events(["z3", "z3"]) + "INSERT INTO commands VALUES ('z3', 3, 3, NULL)"),
            ("more events than it has", events(["z3", "z4"]) + "INSERT INTO commands VALUES ('z3', 3, 4, NULL)"),
            ("another command's events", events(["z4"]) + "INSERT INTO commands VALUES ('z3', 3, 3, NULL)"),
            ("a range past the head", events(["z3"]) + "INSERT INTO commands VALUES ('z3', 3, 4, NULL)"),
            (
                "events split by another command's",
                events(["z3", "z4", "z3"]) + "INSERT INTO commands VALUES ('z3', 3, 5, NULL), ('z4', 4, 4, NULL)"
            ),
        ]
        for (name, sql) in forged {
            let result = Self.rawTransaction(database, sql)
            #expect(!result.succeeded && result.message.contains(message), "\(name): \(result.message)")
        }
        for id in ["z1", "z2", "z3", "z4", "a2x"] { #expect(try store.commandRecord(id) == nil) }
        #expect(try store.headPosition() == 2)

        // An answer at the head, and records of events appended in the same transaction, with
        // an answer in between (as a batch records them), are let through.
        let lawful = Self.rawTransaction(
            database,
            events(["z5", "z5", "z6"])
                + "INSERT INTO commands VALUES ('z5', 3, 4, NULL), ('z7', NULL, 4, '{\"ok\":true}'), ('z6', 5, 5, NULL), "
                + "('z8', NULL, 5, '{\"ok\":true}')")
        #expect(lawful.succeeded, "\(lawful.message)")
        #expect(
            Self.rawTransaction(database, "INSERT INTO commands VALUES ('z9', NULL, 5, '{\"ok\":true}')").succeeded)
        #expect(try store.commandRecord("z7") == .answered(commandId: "z7", position: 4, answer: #"{"ok":true}"#))
        // As in SQLite, a record may come after its events, in another transaction, when they end at the head.
        let late =
            "UPDATE log_head SET position = 6; UPDATE streams SET version = 4 WHERE stream = 'b-1'; "
            + "INSERT INTO events VALUES \(Self.eventRow(6, "b-1", 4, "z10"))"
        #expect(Self.rawTransaction(database, late).succeeded)
        let stale = Self.rawTransaction(database, "INSERT INTO commands VALUES ('z6x', 5, 5, NULL)")
        #expect(!stale.succeeded && stale.message.contains(message), "\(stale.message)")
        #expect(Self.rawTransaction(database, "INSERT INTO commands VALUES ('z10', 6, 6, NULL)").succeeded)
        guard case .appended(let z5)? = try store.commandRecord("z5") else {
            Issue.record("z5 should have its two events")
            return
        }
        #expect(z5.events.map(\.position) == [3, 4])
    }

    @Test("a batch of 2,000 commands passes the database's hole checks in one call")
    func largeBatchPassesTheChecks() throws {
        let (database, admin, store) = try Self.openLog()
        defer { withExtendedLifetime(database) {} }
        let checks = try admin.run(
            "SELECT tgname FROM pg_trigger WHERE tgname IN ('events_have_no_holes', 'commands_cover_their_events', "
                + "'log_head_is_the_last_position') ORDER BY tgname")
        #expect(
            checks.map { $0[0] } == [
                "commands_cover_their_events", "events_have_no_holes", "log_head_is_the_last_position",
            ])
        for round in 0..<2 {
            let batch = (0..<2_000).map { index in
                switch index % 4 {
                case 0: Requests.answer("r\(round)-\(index)")
                case 1: Requests.simple("r\(round)-\(index)", stream: "s-\(index % 37)", count: 3)
                case 2:
                    Requests.request(
                        "r\(round)-\(index)", [Requests.event("n-\(round)-\(index)"), Requests.event("s-1")])
                default: Requests.simple("r\(round)-\(index)", stream: "s-\(index % 5)")
                }
            }
            let results = try store.append(batch)
            #expect(results.allSatisfy { if case .committed = $0 { true } else { false } }, "round \(round)")
        }
        let all = try store.read(fromPosition: 1, limit: 100_000, categories: nil)
        #expect(all.map(\.position) == Array(1...Int64(2 * 500 * (3 + 2 + 1))))
        for stream in Set(all.map(\.stream)) {
            let versions = all.filter { $0.stream == stream }.map(\.version)
            #expect(versions == Array(1...versions.count), "\(stream)")
        }
    }

    /// A log holding two events of `a-1` (command `c1`), made what an older release wrote
    /// by `downgrade`, and a raw connection to it.
    private static func olderLog(_ downgrade: String) throws -> (PostgresTestDatabase, RawPostgres) {
        let database = try PostgresTestDatabase()
        let admin = try RawPostgres(database.connectionString)
        _ = try PostgresEventStore(connectionString: database.connectionString).append([
            Requests.simple("c1", stream: "a-1", count: 2)
        ])
        try admin.run(downgrade)
        return (database, admin)
    }

    @Test("a log of schema version 1 is migrated when opened, by several openers at once, and then refuses holes")
    func schemaOneMigrated() throws {
        // Make the database what the first release wrote: version 1 had the same tables, rewrite
        // triggers and append function, and no hole checks.
        let (database, admin) = try Self.olderLog(
            """
            DROP TRIGGER events_have_no_holes ON events; DROP TRIGGER commands_cover_their_events ON commands;
            DROP TRIGGER log_head_is_the_last_position ON log_head;
            DROP FUNCTION logbook_check_events(); DROP FUNCTION logbook_check_commands(); DROP FUNCTION logbook_check_head();
            UPDATE logbook_schema SET version = 1
            """)
        let errors = onThreads(4) { opener in
            _ = try PostgresEventStore(connectionString: database.connectionString).append([
                Requests.simple("m\(opener)", stream: "m-\(opener)")
            ])
        }
        #expect(errors.isEmpty, "\(errors)")
        #expect(try admin.run("SELECT version FROM logbook_schema") == [["3"]])
        #expect(
            try admin.run(
                "SELECT count(*) FROM pg_trigger WHERE tgname IN ('events_have_no_holes', "
                    + "'commands_cover_their_events', 'log_head_is_the_last_position')") == [["3"]])
        let store = try PostgresEventStore(connectionString: database.connectionString)
        #expect(try store.read(fromPosition: 1, limit: 10, categories: nil).map(\.position) == [1, 2, 3, 4, 5, 6])
        let hole = Self.rawTransaction(
            database,
            "UPDATE log_head SET position = 8; UPDATE streams SET version = 3 WHERE stream = 'a-1'; "
                + "INSERT INTO events VALUES \(Self.eventRow(8, "a-1", 3, "x1"))")
        #expect(!hole.succeeded && hole.message.contains("without holes"), "\(hole.message)")
        #expect(
            try store.append([Requests.request("c2", [Requests.event("a-1")], expecting: ["a-1": .exactly(2)])])
                .first?.committed?.lastPosition == 7)
    }

    @Test("a log of schema version 2 gets the append function of version 3 when opened")
    func schemaTwoMigrated() throws {
        // Version 2 had the same tables and checks; only its append function differs, here one
        // that can only fail, so an append that works proves the migration replaced it.
        let (database, admin) = try Self.olderLog(
            """
            CREATE OR REPLACE FUNCTION logbook_append(batch jsonb)
            RETURNS TABLE (ordinal integer, outcome text, at_position bigint, detail text, actual integer, versions integer[])
            LANGUAGE plpgsql AS $f$ BEGIN RAISE EXCEPTION 'the append function of version 2'; END $f$;
            UPDATE logbook_schema SET version = 2
            """)
        let store = try PostgresEventStore(connectionString: database.connectionString)
        #expect(try admin.run("SELECT version FROM logbook_schema") == [["3"]])
        let appended = try store.append([
            Requests.request("c2", [Requests.event("a-1")], expecting: ["a-1": .exactly(2)])
        ])
        #expect(appended.first?.committed?.lastPosition == 3)
    }

    @Test("payloads are stored as given, with their version, and read back in the current shape")
    func payloadsAndUpcasting() throws {
        let database = try PostgresTestDatabase()
        let written = "{ \"userId\":\"u1\",  \"fullName\":\"Zoë ✓ \\\"q\\\" \\\\ \\u0001\" }"
        _ = try PostgresEventStore(connectionString: database.connectionString).append([
            Requests.request("c1", [Requests.event("user-u1", "PostCreated", data: written)])
        ])
        let raw = try RawPostgres(database.connectionString)
        #expect(try raw.run("SELECT data, data_version FROM events") == [[written, "1"]])

        let renamed = EventEvolution([
            EventUpcaster(type: "PostCreated", fromVersion: 1) { payload throws(EventUpcastError) in
                ["userId": payload["userId"] ?? .null, "name": payload["fullName"] ?? .null]
            }
        ])
        let newer = try PostgresEventStore(connectionString: database.connectionString, evolution: renamed)
        let read = try #require(try newer.read(fromPosition: 1, limit: 1, categories: nil).first)
        #expect(try JSONParser.parse(read.data) == ["userId": "u1", "name": "Zoë ✓ \"q\" \\ \u{1}"])
        _ = try newer.append([Requests.request("c2", [Requests.event("user-u2", "PostCreated", data: "{}")])])
        #expect(try raw.run("SELECT data_version FROM events WHERE position = 2") == [["2"]])
        let older = try PostgresEventStore(connectionString: database.connectionString)
        #expect {
            _ = try older.readStream("user-u2", fromVersion: 1, limit: 1)
        } throws: { error in
            Self.isError(error) { if case .unreadableEvent(2, _) = $0 { true } else { false } }
        }
        // A retried id whose record the older build cannot read fails alone; the batch goes on.
        let retried = try older.append([
            Requests.request("c2", [Requests.event("user-u2", "PostCreated", data: "{}")]),
            Requests.simple("c3", stream: "post-p1"),
        ])
        guard case .unreadableRecord(.unreadableEvent(2, _))? = retried.first else {
            Issue.record("expected an unreadable record for c2, got \(retried)")
            return
        }
        #expect(retried.last?.committed?.lastPosition == 3)
    }
}
