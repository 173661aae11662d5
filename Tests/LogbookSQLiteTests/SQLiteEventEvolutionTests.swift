import Foundation
import LogbookApplication
import LogbookJSON
import LogbookSQLite
import LogbookTestSupport
import Testing

/// The SQLite log keeps each event's schema version beside it and reads old events in
/// the current shape, without ever rewriting them; files of the first schema are migrated.
@Suite("SQLite event store: schema versions and upcasting")
struct SQLiteEventEvolutionTests {
    /// A later build's history of `PostCreated`: version 1 called the name `fullName`.
    private static let renamed = EventEvolution([
        EventUpcaster(type: "PostCreated", fromVersion: 1) { payload throws(EventUpcastError) in
            guard let name = payload["fullName"] else {
                throw EventUpcastError(type: "PostCreated", version: 1, reason: "fullName is missing")
            }
            return ["userId": payload["userId"] ?? .null, "name": name]
        }
    ])

    private func withLog(_ body: (String) throws -> Void) throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(at: directory) }
        try body(directory.appendingPathComponent("events.sqlite3").path)
    }

    private func registration(_ commandId: String, data: String) -> AppendRequest {
        Requests.request(commandId, [Requests.event("user-u1", "PostCreated", data: data)])
    }

    @Test(
        "given an event written under version 1, when a build at version 2 reads it, then every read gives the new shape"
    )
    func oldEventReadInNewShape() throws {
        try withLog { path in
            let written = #"{"userId":"u1","fullName":"Ada"}"#
            _ = try SQLiteEventStore(path: path, evolution: .standard).append([registration("c1", data: written)])

            let store = try SQLiteEventStore(path: path, evolution: Self.renamed)
            let expected: JSONValue = ["userId": "u1", "name": "Ada"]
            #expect(
                try JSONParser.parse(try #require(store.read(fromPosition: 1, limit: 10, categories: nil).first).data)
                    == expected)
            #expect(
                try JSONParser.parse(try #require(store.readStream("user-u1", fromVersion: 1, limit: 10).first).data)
                    == expected)
            #expect(try JSONParser.parse(try #require(store.commandRecord("c1")?.events.first).data) == expected)
            let retried = try store.append([registration("c1", data: written)])
            #expect(try JSONParser.parse(try #require(retried.first?.duplicate?.events.first).data) == expected)

            let row = RawSQLResult.firstRow(path: path, sql: "SELECT data, data_version FROM events WHERE position = 1")
            #expect(row == [written, "1"], "the stored event is never rewritten")
        }
    }

    @Test("given a build at version 2, when it appends, then the event is stored as version 2 and read untouched")
    func newEventsCarryTheCurrentVersion() throws {
        try withLog { path in
            let store = try SQLiteEventStore(path: path, evolution: Self.renamed)
            let written = #"{"userId":"u1","name":"Ada"}"#
            let appended = try store.append([
                registration("c1", data: written), Requests.simple("c2", stream: "post-p1"),
            ])
            #expect(appended.first?.committed?.events.first?.data == written)
            #expect(try store.read(fromPosition: 1, limit: 10, categories: nil).first?.data == written)
            #expect(
                RawSQLResult.firstRow(path: path, sql: "SELECT data_version FROM events WHERE position = 1") == ["2"])
            #expect(
                RawSQLResult.firstRow(path: path, sql: "SELECT type, data_version FROM events WHERE position = 2")
                    == ["Happened", "1"], "only PostCreated has a second version")
        }
    }

    @Test(
        "given an event from a newer build, when an older build reads it, then it gets a clear error naming the position"
    )
    func newerEventRefused() throws {
        try withLog { path in
            _ = try SQLiteEventStore(path: path, evolution: Self.renamed).append([
                Requests.simple("c0", stream: "post-p1"), registration("c1", data: #"{"userId":"u1","name":"Ada"}"#),
            ])
            let older = try SQLiteEventStore(path: path, evolution: .standard)
            #expect(
                try older.read(fromPosition: 1, limit: 1, categories: nil).count == 1, "version 1 events still read")
            #expect {
                _ = try older.read(fromPosition: 1, limit: 10, categories: nil)
            } throws: { error in
                guard case .unreadableEvent(let position, let reason)? = error as? EventStoreError else { return false }
                return position == 2 && reason.contains("version 2") && reason.contains("newer Logbook")
            }
        }
    }

    @Test("given a payload its version's upcaster cannot read, when read, then the error names the event")
    func brokenOldPayloadReported() throws {
        try withLog { path in
            _ = try SQLiteEventStore(path: path, evolution: .standard).append([
                registration("c1", data: #"{"userId":"u1"}"#)
            ])
            #expect {
                _ = try SQLiteEventStore(path: path, evolution: Self.renamed).readStream(
                    "user-u1", fromVersion: 1, limit: 5)
            } throws: { error in
                guard case .unreadableEvent(1, let reason)? = error as? EventStoreError else { return false }
                return reason.contains("fullName is missing")
            }
        }
    }

    @Test("a log of schema version 1 (no data_version column) is migrated when opened, its events as version 1")
    func schemaOneMigrated() throws {
        try withLog { path in
            _ = try SQLiteEventStore(path: path, evolution: .standard).append([
                registration("c1", data: #"{"userId":"u1","fullName":"Ada"}"#)
            ])
            // Make the file what the first release wrote: no data_version column, user_version 1.
            let downgrade = RawSQLResult(
                path: path, sql: "ALTER TABLE events DROP COLUMN data_version; PRAGMA user_version = 1;")
            #expect(downgrade.succeeded, "\(downgrade.message)")
            #expect(RawSQLResult(path: path, sql: "SELECT data_version FROM events").message.contains("no such column"))

            let store = try SQLiteEventStore(path: path, evolution: Self.renamed)
            #expect(RawSQLResult.firstRow(path: path, sql: "PRAGMA user_version") == ["2"])
            #expect(RawSQLResult.firstRow(path: path, sql: "SELECT data_version FROM events") == ["1"])
            #expect(
                try store.read(fromPosition: 1, limit: 10, categories: nil).first?.data
                    == #"{"userId":"u1","name":"Ada"}"#)
            let next = try store.append([Requests.simple("c2", stream: "post-p1")])
            #expect(next.first?.committed?.lastPosition == 2)
            #expect(RawSQLResult(path: path, sql: "UPDATE events SET data_version = 5").message.contains("append-only"))
        }
    }

    @Test("several openers migrating one schema 1 file at the same moment all succeed and agree")
    func concurrentMigration() throws {
        try withLog { path in
            _ = try SQLiteEventStore(path: path, evolution: .standard).append([Requests.simple("c1", stream: "post-p1")]
            )
            #expect(
                RawSQLResult(path: path, sql: "ALTER TABLE events DROP COLUMN data_version; PRAGMA user_version = 1;")
                    .succeeded)
            let errors = onThreads(6) { _ in
                let store = try SQLiteEventStore(path: path, evolution: .standard)
                _ = try store.read(fromPosition: 1, limit: 10, categories: nil)
            }
            #expect(errors.isEmpty, "\(errors)")
            #expect(RawSQLResult.firstRow(path: path, sql: "PRAGMA user_version") == ["2"])
            #expect(
                RawSQLResult.firstRow(
                    path: path, sql: "SELECT count(*) FROM pragma_table_info('events') WHERE name = 'data_version'")
                    == ["1"])
        }
    }
}
