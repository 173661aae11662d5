import Foundation
import LogbookApplication
import LogbookSQLite
import LogbookTestSupport
import Testing

/// What only the SQLite log promises: it recognises its own files, runs in WAL mode with
/// full sync, keeps positions whole in the database itself, and shares one file between
/// several openers (processes) safely.
@Suite("SQLite event store")
struct SQLiteEventStoreTests {
    private func withDirectory(_ body: (URL) throws -> Void) throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        try body(directory)
    }

    @Test("a file of random bytes is refused with a clear error, not a crash")
    func randomBytesRefused() throws {
        try withDirectory { directory in
            let path = directory.appendingPathComponent("garbage.sqlite3").path
            var generator = SystemRandomNumberGenerator()
            let bytes = (0..<8192).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
            #expect {
                _ = try SQLiteEventStore(path: path)
            } throws: { error in
                guard case .notAnEventLog(let reported, let reason)? = error as? EventStoreError else { return false }
                return reported == path && reason.contains("not a SQLite database")
            }
            let contents = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(contents == Data(bytes), "the file is left untouched")
        }
    }

    @Test("another program's SQLite database is refused and left untouched")
    func foreignDatabaseRefused() throws {
        try withDirectory { directory in
            let path = directory.appendingPathComponent("other.sqlite3").path
            #expect(RawSQLResult(path: path, sql: "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)").succeeded)
            #expect {
                _ = try SQLiteEventStore(path: path)
            } throws: { error in
                guard case .notAnEventLog? = error as? EventStoreError else { return false }
                return true
            }
            #expect(RawSQLResult(path: path, sql: "SELECT 1 FROM events").message.contains("no such table"))
        }
    }

    @Test("a log written by a newer schema version is refused")
    func newerSchemaRefused() throws {
        try withDirectory { directory in
            let path = directory.appendingPathComponent("events.sqlite3").path
            _ = try SQLiteEventStore(path: path)
            #expect(RawSQLResult(path: path, sql: "PRAGMA user_version = 99").succeeded)
            #expect(throws: EventStoreError.unsupportedSchema(found: 99, supported: 2)) {
                _ = try SQLiteEventStore(path: path)
            }
        }
    }

    @Test("a log in a directory that does not exist is unavailable, not a crash")
    func missingDirectory() throws {
        #expect {
            _ = try SQLiteEventStore(path: "/nonexistent-\(UUID().uuidString)/events.sqlite3")
        } throws: { error in
            guard case .unavailable? = error as? EventStoreError else { return false }
            return true
        }
    }

    @Test("the log runs in WAL mode with synchronous=FULL")
    func walMode() throws {
        try withDirectory { directory in
            let path = directory.appendingPathComponent("events.sqlite3").path
            let store = try SQLiteEventStore(path: path)
            let settings = try store.durabilitySettings()
            #expect(settings.journalMode == "wal")
            #expect(settings.synchronous == 2, "2 is FULL")
            _ = try store.append([Requests.simple("c1", stream: "a-1")])
            #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        }
    }

    @Test("the database itself refuses an event that would leave a hole in positions or versions")
    func holesRefusedByDatabase() throws {
        try withDirectory { directory in
            let path = directory.appendingPathComponent("events.sqlite3").path
            let store = try SQLiteEventStore(path: path)
            _ = try store.append([Requests.simple("c1", stream: "a-1")])
            let columns =
                "(position, event_id, stream, category, version, type, data, command_id, correlation_id, causation_id, recorded_at)"
            let skipPosition = RawSQLResult(
                path: path,
                sql: "INSERT INTO events \(columns) VALUES (3, 'e', 'a-1', 'a', 2, 'T', '{}', 'x', 'x', 'x', 0)")
            #expect(!skipPosition.succeeded)
            let skipVersion = RawSQLResult(
                path: path,
                sql: "INSERT INTO events \(columns) VALUES (2, 'e', 'a-1', 'a', 3, 'T', '{}', 'x', 'x', 'x', 0)")
            #expect(!skipVersion.succeeded)
            #expect(try store.headPosition() == 1)
        }
    }

    @Test("two stores on one file (two processes) share positions and see each other's writes")
    func twoOpenersShareOneLog() throws {
        try withDirectory { directory in
            let path = directory.appendingPathComponent("events.sqlite3").path
            let first = try SQLiteEventStore(path: path)
            let second = try SQLiteEventStore(path: path)
            _ = try first.append([Requests.request("c1", [Requests.event("a-1")], expecting: ["a-1": .noStream])])
            let racing = try second.append([
                Requests.request("c2", [Requests.event("a-1")], expecting: ["a-1": .noStream])
            ])
            #expect(racing == [.conflict(VersionConflict(stream: "a-1", expected: .noStream, actual: 1))])
            #expect(try second.append([Requests.simple("c1", stream: "b-1")])[0].duplicate != nil)
            let next = try second.append([Requests.simple("c3", stream: "b-1")])
            #expect(next[0].committed?.events.first?.position == 2)
            #expect(try first.read(fromPosition: 1, limit: 10, categories: nil).map(\.position) == [1, 2])
        }
    }

    @Test("many threads appending through two openers of one file leave no holes")
    func concurrentOpeners() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.sqlite3").path
        let stores = [try SQLiteEventStore(path: path), try SQLiteEventStore(path: path)]
        let errors = onThreads(4) { writer in
            for n in 0..<25 {
                _ = try stores[writer % 2].append([Requests.simple("w\(writer)-\(n)", stream: "s-\(n % 5)")])
            }
        }
        #expect(errors.isEmpty, "\(errors)")
        #expect(
            try stores[0].read(fromPosition: 1, limit: 1000, categories: nil).map(\.position)
                == (1...100).map { Int64($0) })
    }

    @Test("no read transaction is left open between calls, so checkpoints can empty the WAL")
    func noLingeringReadTransaction() throws {
        try withDirectory { directory in
            let path = directory.appendingPathComponent("events.sqlite3").path
            let store = try SQLiteEventStore(path: path)
            _ = try store.append([Requests.simple("c1", stream: "a-1", count: 3), Requests.answer("c2")])
            // Every kind of read, including those that stop before the last row; after each,
            // wal_checkpoint(TRUNCATE) must not be blocked (busy = 1 means a reader holds a snapshot).
            let reads: [(String, () throws -> Void)] = [
                ("appended record", { _ = try store.commandRecord("c1") }),
                ("answered record", { _ = try store.commandRecord("c2") }),
                ("missing record", { _ = try store.commandRecord("missing") }),
                ("head", { _ = try store.headPosition() }),
                ("read", { _ = try store.read(fromPosition: 1, limit: 1, categories: nil) }),
                ("read by category", { _ = try store.read(fromPosition: 1, limit: 1, categories: ["a"]) }),
                ("read stream", { _ = try store.readStream("a-1", fromVersion: 1, limit: 1) }),
                ("settings", { _ = try store.durabilitySettings() }),
            ]
            for (name, read) in reads {
                _ = try store.append([Requests.simple("before-\(name)", stream: "b-1")])
                try read()
                let checkpoint = RawSQLResult.firstRow(path: path, sql: "PRAGMA wal_checkpoint(TRUNCATE)")
                #expect(checkpoint.first == "0", "\(name) left a reader behind: \(checkpoint)")
                let walSize = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int
                #expect(walSize == 0, "\(name)")
            }
        }
    }

    @Test("many openers creating a new log at the same moment all succeed and agree on one schema")
    func concurrentFirstOpen() throws {
        for trial in 0..<5 {
            let directory = try TemporaryDirectory.make()
            defer { try? FileManager.default.removeItem(at: directory) }
            let path = directory.appendingPathComponent("events.sqlite3").path
            let errors = onThreads(6) { writer in
                let store = try SQLiteEventStore(path: path)
                _ = try store.append([Requests.simple("t\(trial)-w\(writer)", stream: "s-\(writer)")])
            }
            #expect(errors.isEmpty, "trial \(trial): \(errors)")
            let store = try SQLiteEventStore(path: path)
            #expect(try store.read(fromPosition: 1, limit: 100, categories: nil).map(\.position) == [1, 2, 3, 4, 5, 6])
        }
    }

    @Test("INSERT OR REPLACE cannot rewrite a command record or an event")
    func replaceRefused() throws {
        try withDirectory { directory in
            let path = directory.appendingPathComponent("events.sqlite3").path
            let store = try SQLiteEventStore(path: path)
            _ = try store.append([Requests.simple("c1", stream: "a-1"), Requests.simple("c2", stream: "a-1")])
            let before = try store.commandRecord("c1")
            #expect(
                !RawSQLResult(path: path, sql: "INSERT OR REPLACE INTO commands VALUES ('c1', 2, 2, NULL)").succeeded)
            let columns =
                "(position, event_id, stream, category, version, type, data, command_id, correlation_id, causation_id, recorded_at)"
            #expect(
                !RawSQLResult(
                    path: path,
                    sql:
                        "INSERT OR REPLACE INTO events \(columns) VALUES (1, 'e', 'a-1', 'a', 1, 'T', '{}', 'x', 'x', 'x', 0)"
                ).succeeded)
            #expect(try store.commandRecord("c1") == before)
        }
    }

    @Test("the database refuses command records that do not match the events they claim")
    func commandRecordsMustMatchTheirEvents() throws {
        try withDirectory { directory in
            let path = directory.appendingPathComponent("events.sqlite3").path
            let store = try SQLiteEventStore(path: path)
            _ = try store.append([Requests.simple("a1", stream: "a-1"), Requests.simple("a2", stream: "a-1")])
            let forged = [
                "INSERT INTO commands VALUES ('z1', NULL, 1, '{\"ok\":true}')",  // stale head
                "INSERT INTO commands VALUES ('z2', 1, 2, NULL)",  // events of a1 and a2
                "INSERT INTO commands VALUES ('z3', 5, 2, NULL)",  // first after last
                "INSERT INTO commands VALUES ('z4', NULL, 2, '')",  // an answer that is not JSON
                "INSERT INTO commands VALUES ('a2x', 2, 2, NULL)",  // someone else's event
            ]
            for sql in forged {
                #expect(!RawSQLResult(path: path, sql: sql).succeeded, "\(sql)")
            }
            #expect(
                RawSQLResult(path: path, sql: "INSERT INTO commands VALUES ('z5', NULL, 2, '{\"ok\":true}')").succeeded)
            for id in ["z1", "z2", "z3", "z4", "a2x"] { #expect(try store.commandRecord(id) == nil) }
        }
    }

    @Test("with background checkpoints the WAL is copied into the file by a thread of its own, and nothing is lost")
    func backgroundCheckpoints() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.sqlite3").path
        let padding = String(repeating: "x", count: 2_000)
        var store: SQLiteEventStore? = try SQLiteEventStore(path: path, backgroundCheckpoints: true)
        // About 22 MB of events in commits of 50: the WAL passes 4,000 pages
        // (`SQLiteCheckpointer.thresholdPages`).
        for batch in 0..<220 {
            _ = try store?.append(
                (0..<50).map { n in
                    Requests.request(
                        "c\(batch)-\(n)",
                        [Requests.event("item-\(batch)-\(n)", data: #"{"pad":"\#(padding)"}"#)])
                })
        }
        // The checkpoints run on their own thread: wait for the first (20 s at most, on a loaded machine).
        var waited = 0
        while (store?.backgroundCheckpointCounts?.checkpoints ?? 0) < 1 && waited < 2_000 {
            usleep(10_000)
            waited += 1
        }
        #expect((store?.backgroundCheckpointCounts?.checkpoints ?? 0) >= 1, "no background checkpoint ran")
        #expect(store?.backgroundCheckpointCounts?.failures == 0)
        let fileBytes = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        #expect(fileBytes > 1_000_000, "the database file holds the checkpointed pages: \(fileBytes) bytes")
        #expect(try SQLiteEventStore(path: path).backgroundCheckpointCounts == nil)
        store = nil
        let reopened = try SQLiteEventStore(path: path)
        #expect(try reopened.headPosition() == 11_000)
        let all = try reopened.read(fromPosition: 1, limit: 11_000, categories: nil)
        #expect(all.map(\.position) == Array(1...11_000))
    }
}
