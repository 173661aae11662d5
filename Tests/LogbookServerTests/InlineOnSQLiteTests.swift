import Foundation
import LogbookApplication
import LogbookJSON
import LogbookSQLite
import LogbookTestSupport
import Testing

@testable import LogbookServer

/// `CommitStage.runInline` on a real SQLite log with deferred syncs and the writer's own
/// turns: whatever an inline batch does (appends, is refused before its record, or is
/// decided a second time after a conflict), it leaves no transaction open, and the writer
/// waits for other connections' locks again afterwards.
@Suite("Inline batches on a SQLite log leave no turn behind")
struct InlineOnSQLiteTests {
    private static func registration(_ commandId: String, user: String) -> CommandRequest {
        CommandRequest(
            commandId: commandId, type: "RegisterUser",
            data: ["userId": .string(user), "name": "Ann", "email": .string("\(user)@example.com")])
    }

    /// An append by another connection that does not wait for locks: it succeeds only if
    /// no transaction of the writer holds the log's write lock.
    private static func appendWithoutWaiting(_ other: SQLiteEventStore, _ number: Int) throws -> Bool {
        let request = AppendRequest(
            metadata: EventMetadata(commandId: "other-\(number)", correlationId: "o", causationId: "o"),
            events: [
                NewEvent(
                    eventId: "other-event-\(number)", stream: "note-\(number)", type: "Noted", data: "{}",
                    recordedAt: 1_764_000_000_000)
            ],
            expectations: [:])
        return try other.append([request]).first.map { if case .committed = $0 { true } else { false } } ?? false
    }

    @Test("appended, refused, or decided again after a conflict: no transaction is left open")
    func noTurnLeftOpen() throws {
        let directory = try SocketFolder.make("logbook-inline")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.sqlite3").path
        let horizon = try SQLiteDurableHorizon.opening(path: path)
        let store = try SQLiteEventStore(path: path, durability: .deferredSyncs(horizon))
        // u1 exists before the stage's handler starts: it knows nothing of it, so its first
        // round takes u1's stream as new, meets the conflict, and decides again.
        let earlier = CommandHandler(store: store, clock: StepClock(), ids: CountingIds(), buckets: .forTests)
        #expect(earlier.handle(Self.registration("c0", user: "u1")).accepted != nil)
        try horizon.flush()
        let stage = try CommitStage(
            handler: CommandHandler(store: store, clock: StepClock(), ids: CountingIds(), buckets: .forTests),
            flusher: horizon,
            turns: store, heartbeat: Heartbeat())
        defer { stage.stop() }
        let other = try SQLiteEventStore(path: path, busyTimeoutMilliseconds: 0)

        let appended = try #require(stage.runInline([Self.registration("c1", user: "u2")]))
        #expect(appended.outcomes.map { $0.accepted?.events.count } == [2])
        #expect(try Self.appendWithoutWaiting(other, 1), "a transaction stayed open after an appended batch")

        let unknown = CommandRequest(commandId: "c2", type: "NoSuchCommand", data: [:])
        let refused = try #require(stage.runInline([unknown]))
        #expect(refused.outcomes.map(\.error?.code) == [.unknownType])
        #expect(try Self.appendWithoutWaiting(other, 2), "a transaction stayed open after a refused batch")

        let again = try #require(stage.runInline([Self.registration("c3", user: "u1")]))
        #expect(again.outcomes.map(\.error?.code) == [.alreadyExists])
        #expect(again.commandsDecidedAgain == 1, "the command was not decided a second time")
        #expect(try Self.appendWithoutWaiting(other, 3), "a transaction stayed open after a second round")

        // And the writer waits for a lock again: one held for a moment is waited out.
        let held = try SQLiteWriteLock(path: path)
        held.release(afterMilliseconds: 300)
        let later = try #require(
            stage.runInline([Self.registration("c4", user: "u4")])
                ?? {
                    // Declined while the lock is held (the turn is not waited for): the stage's own append waits.
                    stage.submit([Self.registration("c4", user: "u4")])
                    return stage.waitForFinished().first
                }())
        #expect(later.outcomes.map { $0.accepted?.events.count } == [2])
    }
}
