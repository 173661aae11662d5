import LogbookDomain
import LogbookTestSupport
import LogbookWire
import Testing

@testable import LogbookApplication

/// Pages read straight into row changes (`EncodedLogPage`, how a rebuild reads the log) give
/// exactly the changes, rows and refusals of the same events decoded into `RecordedEvent`s,
/// alone or joined (`JoinedEventBatch`, how a catch-up applies them); a bulk load of such
/// pages: `BulkLoadTests`.
@Suite("Projecting pages kept as bytes")
struct EncodedPageProjectionTests {
    /// `events` as the worker sends them in a `ReadLog` reply, read back without decoding.
    static func encoded(_ events: [RecordedEvent]) throws -> EncodedLogPage {
        let head = events.last?.position ?? 0
        let reply = LogReader.replyBytes(id: "r", LogPage(events: events, next: head + 1, head: head))
        return try #require(EncodedLogPageReader.page(reply)?.page)
    }

    @Test func everyEventTypeGivesTheChangesOfTheDecodedEvents() throws {
        let log = try Log.everyEventType()
        let page = try Self.encoded(log.all)
        let changes = try page.readModelChanges(0..<page.count)
        #expect(changes == (try Projector.changes(log.all[...])))
        #expect(changes.count == log.all.count - 1)
        // Every payload the codec wrote is read from the page's bytes by the fast path itself.
        try Self.expectFastPath(page)
    }

    @Test(arguments: [5, 17, 2026] as [UInt64])
    func randomLogsGiveTheChangesOfTheDecodedEvents(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let log = try RandomLog.make(steps: 1_500, using: &random)
        let page = try Self.encoded(log.all)
        var start = 0
        while start < page.events.count {
            let end = min(page.events.count, start + Int.random(in: 1...300, using: &random))
            #expect(try page.readModelChanges(start..<end) == Projector.changes(log.all[start..<end]))
            start = end
        }
        try Self.expectFastPath(page)
    }

    static func expectFastPath(_ page: EncodedLogPage) throws {
        for event in page.events {
            let recorded = try #require(page.recordedEvent(event))
            guard Projector.isProjected(recorded.stream) else { continue }
            let outcome = page.withFields(of: event) { stream, type, data in
                PayloadProjection.change(
                    PayloadProjection.EventBytes(
                        position: event.position, recordedAt: event.recordedAt, stream: stream, type: type, data: data))
            }
            #expect(outcome != .unsupported, "\(recorded.type): \(recorded.data)")
        }
    }

    /// Payloads in another layout than the codec's, and streams with escapes in their names,
    /// take the decoding path and give its changes.
    @Test func otherLayoutsAndStreamNamesTakeTheDecodingPath() throws {
        var log = Log()
        log.record(
            type: "UserRegistered", stream: "user-u1",
            data: #"{"name":"Ann","userId":"u1","email":"a@b.example","gender":"male","subscription":"free"}"#)
        log.record(
            type: "UserRegistered", stream: "user-u2",
            data:
                #"{"userId":"u2","name":"Cy","email":"c@b.example","gender":"male","birthday":null,"subscription":"free"}"#
        )
        log.record(type: "Noted", stream: "notes\t-1", data: #"{"text":"x"}"#)
        log.record(type: "Noted", stream: "\"quoted\"-1", data: #"{"text":"x"}"#)
        let page = try Self.encoded(log.all)
        let changes = try page.readModelChanges(0..<page.count)
        #expect(changes.count == 2)
        #expect(changes == (try Projector.changes(log.all[...])))
    }

    /// A payload the codec cannot read is refused with the decoding path's error and position.
    @Test(arguments: [
        ("UserDeleted", "user-u1", #"{"userId":7}"#),
        ("UserDeleted", "user-u1", #"{"userId":"u1","extra":1}"#),
        ("UserDeleted", "user-u2", #"{"userId":"u1"}"#),
        ("UserExploded", "user-u1", #"{"userId":"u1"}"#),
        ("ProductRestocked", "product-x1", #"{"productId":"x1","quantity":0,"stock":5}"#),
        ("ProductAdded", "product-x1", #"{"productId":"x1","name":"L","price":"1.234","category":"food","stock":1}"#),
    ])
    func undecodablePayloadsAreRefused(type: String, stream: String, data: String) throws {
        var log = Log()
        log.record(try Events.registered("u0"))
        let bad = log.record(type: type, stream: stream, data: data)
        let page = try Self.encoded(log.all)
        var expected: ReadModelStoreError?
        do { _ = try Projector.changes(log.all[...]) } catch { expected = error }
        #expect(expected != nil)
        #expect(throws: expected!) { try page.readModelChanges(0..<page.count) }
        if case .unreadableEvent(let position, _)? = expected { #expect(position == bad.position) }
    }

    /// A page with an unreadable payload is refused whole by a bulk load, which goes on.
    @Test func aBulkLoadRefusesAPageWithAnUnreadablePayloadWhole() throws {
        var log = Log()
        log.record(try Events.registered("u1"))
        log.record(try Events.productAdded("p1", name: "Tea", stock: 2))
        var broken = log
        broken.record(type: "UserDeleted", stream: "user-u1", data: #"{"userId":7}"#)
        let bulk = try ReadModelHarness(.sqlite, bulkFlushRows: 1)
        try bulk.store.beginBulkLoad()
        try bulk.store.apply(try Self.encoded([log.all[0]]), through: 1)
        #expect(throws: ReadModelStoreError.self) {
            try bulk.store.apply(try Self.encoded(Array(broken.all[1...])), through: 3)
        }
        #expect(try bulk.store.checkpoint() == 1)
        try bulk.store.apply(try Self.encoded([log.all[1]]), through: 2)
        try bulk.store.endBulkLoad()
        #expect(try bulk.snapshot().counts == ReadModelCounts(users: 1, posts: 0, products: 1, orders: 0))
    }

    /// Consecutive pages applied together (a catch-up) give the rows and checkpoint of their
    /// events applied in one array; pages that overlap, or a page that was applied, are
    /// refused whole, with nothing written.
    @Test(arguments: [ReadModelStoreKind.memory, .sqlite])
    func consecutivePagesApplyAsOneBatch(kind: ReadModelStoreKind) throws {
        let log = try Log.everyEventType()
        let events = log.all
        let third = events.count / 3
        let thirds = [Array(events[..<third]), Array(events[third..<(2 * third)]), Array(events[(2 * third)...])]
        let reference = try ReadModelHarness(kind)
        try reference.store.apply(events, through: log.head + 2)
        let paged = try ReadModelHarness(kind)
        let pages = try thirds.map { try Self.encoded($0) }
        #expect(throws: ReadModelStoreError.self) {
            try paged.store.apply(JoinedEventBatch([pages[0], pages[2], pages[1]]), through: log.head)
        }
        #expect(throws: ReadModelStoreError.self) {
            try paged.store.apply(JoinedEventBatch([pages[0], pages[0]]), through: log.head)
        }
        #expect(try paged.store.checkpoint() == 0)
        #expect(try paged.snapshot().counts == ReadModelCounts())
        try paged.store.apply(JoinedEventBatch(pages), through: log.head + 2)
        #expect(try paged.store.checkpoint() == log.head + 2)
        #expect(try paged.snapshot() == reference.snapshot())
        #expect(throws: ReadModelStoreError.alreadyApplied(position: events[0].position, checkpoint: log.head + 2)) {
            try paged.store.apply(JoinedEventBatch(pages), through: log.head + 2)
        }
        try paged.store.apply(JoinedEventBatch<EncodedLogPage>([]), through: log.head + 3)
        #expect(try paged.store.checkpoint() == log.head + 3)
    }

    /// Joined pages, empty ones among them, give each event's position, and the changes of
    /// any range across their boundaries, as the same events in one array.
    @Test(arguments: [3, 41] as [UInt64])
    func joinedPagesAreOneBatch(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let log = try RandomLog.make(steps: 600, using: &random)
        let empty = try Self.encoded([])
        var parts = [empty]
        var start = 0
        while start < log.all.count {
            let end = min(log.all.count, start + Int.random(in: 1...40, using: &random))
            parts.append(try Self.encoded(Array(log.all[start..<end])))
            if random.chance(25) { parts.append(empty) }
            start = end
        }
        parts.append(empty)
        let joined = JoinedEventBatch(parts)
        #expect(joined.count == log.all.count)
        #expect((0..<joined.count).map(joined.position(at:)) == log.all.map(\.position))
        for _ in 0..<60 {
            let lower = Int.random(in: 0...joined.count, using: &random)
            let upper = Int.random(in: lower...min(joined.count, lower + 120), using: &random)
            #expect(try joined.readModelChanges(lower..<upper) == Projector.changes(log.all[lower..<upper]))
        }
    }

    /// The in-memory store applies a page as any batch, with the same rows and refusals.
    @Test func theInMemoryStoreAppliesEncodedPages() throws {
        let log = try Log.everyEventType()
        let reference = try ReadModelHarness(.memory)
        let encoded = try ReadModelHarness(.memory)
        try reference.store.apply(log.all, through: log.head)
        try encoded.store.apply(try Self.encoded(log.all), through: log.head)
        #expect(try encoded.snapshot() == reference.snapshot())
        #expect(throws: ReadModelStoreError.alreadyApplied(position: 1, checkpoint: log.head)) {
            try encoded.store.apply(try Self.encoded(log.all), through: log.head)
        }
    }
}
