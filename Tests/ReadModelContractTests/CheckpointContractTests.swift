import LogbookApplication
import LogbookDomain
import LogbookTestSupport
import Testing

/// The checkpoint and the all-or-nothing promise of `apply`, on every store.
@Suite("Checkpoints, on every read-model store")
struct CheckpointContractTests {
    /// A small log: a user, a product and a post.
    private static func log() throws -> Log {
        var log = Log()
        log.record(try Events.registered("u1"))
        log.record(try Events.productAdded("p1"))
        log.record(try Events.postCreated("x1", author: "u1"))
        return log
    }

    @Test(arguments: ReadModelStoreKind.allCases)
    func aNewStoreIsAtZero(kind: ReadModelStoreKind) throws {
        let harness = try ReadModelHarness(kind)
        #expect(try harness.store.checkpoint() == 0)
        #expect(try harness.reader.checkpoint() == 0)
        #expect(
            try harness.snapshot()
                == ReadModelHarness.Snapshot(checkpoint: 0, users: [], posts: [], products: [], counts: .init()))
    }

    @Test(arguments: ReadModelStoreKind.allCases)
    func applyMovesTheCheckpointToThroughEvenPastTheLastEvent(kind: ReadModelStoreKind) throws {
        let harness = try ReadModelHarness(kind)
        let log = try Self.log()
        try harness.store.apply(Array(log.all.prefix(2)), through: 2)
        #expect(try harness.store.checkpoint() == 2)
        #expect(try harness.reader.checkpoint() == 2)
        // The head a catch-up learned lies beyond the last event it was given.
        try harness.store.apply([log.all[2]], through: 10)
        #expect(try harness.store.checkpoint() == 10)
        #expect(try harness.reader.counts() == ReadModelCounts(users: 1, posts: 1, products: 1))
    }

    @Test(arguments: ReadModelStoreKind.allCases)
    func anEmptyBatchAdvancesTheCheckpoint(kind: ReadModelStoreKind) throws {
        let harness = try ReadModelHarness(kind)
        try harness.store.apply([RecordedEvent](), through: 5)
        #expect(try harness.store.checkpoint() == 5)
        try harness.store.apply([RecordedEvent](), through: 5)  // staying put is allowed
        #expect(try harness.reader.checkpoint() == 5)
        #expect(try harness.reader.counts() == ReadModelCounts())
        // Events of other categories, never handed over, leave gaps the checkpoint covers.
        var log = Log()
        log.skipPositions(5)
        log.record(try Events.registered("u1"))
        try harness.catchUp(log)
        #expect(try harness.store.checkpoint() == 6)
        #expect(try harness.reader.user(UserId("u1")) != nil)
    }

    /// Each refused batch, with the error it must get, after the first two events were applied.
    private static func refusals(_ log: Log) -> [(String, [RecordedEvent], Int64, ReadModelStoreError)] {
        let (first, second, third) = (log.all[0], log.all[1], log.all[2])
        return [
            ("re-applying the last event", [second], 3, .alreadyApplied(position: 2, checkpoint: 2)),
            ("re-applying an old event first", [first, third], 3, .alreadyApplied(position: 1, checkpoint: 2)),
            ("re-applying within a batch", [third, third], 3, .outOfOrder(position: 3, previous: 3)),
            ("positions going back", [third, second], 3, .alreadyApplied(position: 2, checkpoint: 2)),
            ("an event beyond through", [third], 2, .beyondTarget(position: 3, through: 2)),
            ("moving the checkpoint back", [], 1, .checkpointWouldMoveBack(through: 1, checkpoint: 2)),
            ("moving back with no events", [], 0, .checkpointWouldMoveBack(through: 0, checkpoint: 2)),
        ]
    }

    @Test(arguments: ReadModelStoreKind.allCases)
    func refusedBatchesWriteNothing(kind: ReadModelStoreKind) throws {
        var log = try Self.log()
        // Out of order within a batch, beyond the checkpoint.
        log.record(try Events.registered("u2"))
        log.record(try Events.registered("u3"))
        let harness = try ReadModelHarness(kind)
        try harness.store.apply(Array(log.all.prefix(2)), through: 2)
        let before = try harness.snapshot()
        for (name, events, through, expected) in Self.refusals(log) {
            #expect(throws: expected, "\(name)") { try harness.store.apply(events, through: through) }
            #expect(try harness.snapshot() == before, "\(name)")
            #expect(try harness.store.checkpoint() == 2, "\(name)")
        }
        let (fourth, fifth) = (log.all[3], log.all[4])
        #expect(throws: ReadModelStoreError.outOfOrder(position: 4, previous: 5)) {
            try harness.store.apply([fifth, fourth], through: 5)
        }
        #expect(try harness.snapshot() == before)
        // The same events, in order, then apply once.
        try harness.store.apply(Array(log.all.dropFirst(2)), through: 5)
        #expect(try harness.reader.counts() == ReadModelCounts(users: 3, posts: 1, products: 1))
        #expect(throws: ReadModelStoreError.alreadyApplied(position: 5, checkpoint: 5)) {
            try harness.store.apply([fifth], through: 5)
        }
        #expect(try harness.reader.counts() == ReadModelCounts(users: 3, posts: 1, products: 1))
    }

    @Test(arguments: ReadModelStoreKind.allCases)
    func anUnreadableEventRefusesTheWholeBatch(kind: ReadModelStoreKind) throws {
        let harness = try ReadModelHarness(kind)
        var log = Log()
        log.record(try Events.registered("u1"))
        try harness.catchUp(log)
        let before = try harness.snapshot()

        var broken = log
        broken.record(try Events.registered("u2"))
        broken.record(try Events.productAdded("p1"))
        let bad = broken.record(type: "ProductAdded", stream: "product-p2", data: #"{"productId":"p2","name":"X"}"#)
        broken.record(try Events.registered("u3"))
        let error = try #require(throws: ReadModelStoreError.self) {
            try harness.store.apply(broken.events(after: 1), through: broken.head)
        }
        guard case .unreadableEvent(let position, let reason) = error else {
            Issue.record("expected unreadableEvent, got \(error)")
            return
        }
        #expect(position == bad.position)
        #expect(reason.contains("ProductAdded"))
        #expect(try harness.snapshot() == before)
        #expect(try harness.reader.user(UserId("u2")) == nil)
        #expect(try harness.reader.product(ProductId("p1")) == nil)
    }

    @Test(arguments: ReadModelStoreKind.allCases)
    func unreadableEventsOfEveryKindAreRefused(kind: ReadModelStoreKind) throws {
        let harness = try ReadModelHarness(kind)
        let cases: [(type: String, stream: String, data: String)] = [
            ("UserRegistered", "user-u1", "not JSON"),
            ("UserRegistered", "user-u1", #"{"userId":"u1"}"#),
            ("OrderShipped", "order-o1", #"{"orderId":"o1"}"#),
            ("PostDeleted", "post-p1", #"{"postId":"p1","extra":1}"#),
            // The payload names another stream than the one the event is on.
            ("PostDeleted", "post-p1", #"{"postId":"p2"}"#),
            ("UserDeleted", "user-u1", #"{"userId":"bad id!"}"#),
        ]
        for (type, stream, data) in cases {
            var log = Log()
            log.record(type: type, stream: stream, data: data)
            #expect(throws: ReadModelStoreError.self, "\(type) \(data)") {
                try harness.store.apply(log.all, through: 1)
            }
            #expect(try harness.store.checkpoint() == 0)
        }
    }

    @Test(arguments: ReadModelStoreKind.allCases)
    func catchingUpInBatchesEqualsOneBatch(kind: ReadModelStoreKind) throws {
        var log = Log()
        for index in 0..<30 {
            log.record(try Events.registered("u\(index)"))
            log.record(try Events.productAdded("p\(index)", name: "Product \(index)", stock: index % 3))
            if index % 4 == 0 { log.record(try Events.userDeleted("u\(index / 2)")) }
            if index % 5 == 0 { log.record(try Events.productRestocked("p\(index / 2)", quantity: 1, stock: 9)) }
        }
        let whole = try ReadModelHarness(kind)
        try whole.store.apply(log.all, through: log.head)
        let batched = try ReadModelHarness(kind)
        var next = 0
        for size in [1, 7, 2, 13, 100] where next < log.all.count {
            let batch = Array(log.all[next..<min(next + size, log.all.count)])
            try batched.store.apply(batch, through: batch.last!.position)
            next += size
        }
        #expect(try batched.snapshot() == whole.snapshot())
        #expect(try whole.reader.checkpoint() == log.head)
    }

    /// A log long enough that one batch spans many decoding chunks of the SQLite store.
    private static func longLog() throws -> Log {
        var log = Log()
        for index in 0..<700 {
            log.record(try Events.registered("u\(index)"))
            log.record(try Events.emailClaimed("u\(index)@example.com", by: "u\(index)"))
            log.record(try Events.productAdded("p\(index)", name: "Product \(index)", stock: 5))
            if index % 3 == 0 {
                log.record(
                    try Events.purchase(
                        order: "o\(index)", user: "u\(index)", product: "p\(index)", quantity: 5, stockAfter: 0))
            }
            if index % 7 == 0 { log.record(try Events.userDeleted("u\(index / 2)")) }
        }
        return log
    }

    @Test(arguments: ReadModelStoreKind.allCases)
    func aLongBatchIsAppliedInOrder(kind: ReadModelStoreKind) throws {
        let log = try Self.longLog()
        #expect(log.all.count > 2_000)
        let whole = try ReadModelHarness(kind)
        try whole.store.apply(log.all, through: log.head)
        let oneByOne = try ReadModelHarness(kind)
        for event in log.all { try oneByOne.store.apply([event], through: event.position) }
        #expect(try whole.snapshot() == oneByOne.snapshot())
        let counts = try whole.reader.counts()
        #expect(counts == ReadModelCounts(users: 600, posts: 0, products: 700, orders: 234))
        #expect(try whole.reader.products(inStockOnly: true, page: 1, perPage: 1).total == 466)
        #expect(
            try whole.reader.orders(userId: UserId("u699"), page: 1, perPage: 5).items.map(\.orderId.rawValue) == [
                "o699"
            ])
    }

    @Test(arguments: ReadModelStoreKind.allCases)
    func anUnreadableEventLateInALongBatchWritesNothing(kind: ReadModelStoreKind) throws {
        var log = try Self.longLog()
        let bad = log.record(type: "UserRegistered", stream: "user-late", data: #"{"userId":"late"}"#)
        log.record(try Events.registered("after"))
        let harness = try ReadModelHarness(kind)
        try harness.store.apply([RecordedEvent](), through: 0)
        #expect(throws: ReadModelStoreError.self) { try harness.store.apply(log.all, through: log.head) }
        #expect(
            try harness.snapshot()
                == ReadModelHarness.Snapshot(checkpoint: 0, users: [], posts: [], products: [], counts: .init()))
        // Everything before the bad event applies; the bad event is named.
        try harness.store.apply(log.events(after: 0).filter { $0.position < bad.position }, through: bad.position - 1)
        let error = try #require(throws: ReadModelStoreError.self) {
            try harness.store.apply(log.events(after: bad.position - 1), through: log.head)
        }
        guard case .unreadableEvent(let position, _) = error else {
            Issue.record("expected unreadableEvent, got \(error)")
            return
        }
        #expect(position == bad.position)
        #expect(try harness.store.checkpoint() == bad.position - 1)
        #expect(try harness.reader.user(UserId("after")) == nil)
    }

    @Test(arguments: ReadModelStoreKind.allCases)
    func completenessIsMarkedOnlyOnRequest(kind: ReadModelStoreKind) throws {
        let harness = try ReadModelHarness(kind)
        #expect(try !harness.store.isComplete)
        try harness.catchUp(try Self.log())
        #expect(try !harness.store.isComplete)
        try harness.store.markComplete()
        #expect(try harness.store.isComplete)
        try harness.reopen()
        #expect(try harness.store.isComplete)
    }

    @Test(arguments: ReadModelStoreKind.allCases)
    func theReaderSeesEachCommittedBatch(kind: ReadModelStoreKind) throws {
        let harness = try ReadModelHarness(kind)
        var log = Log()
        for round in 1...5 {
            log.record(try Events.registered("u\(round)"))
            log.record(try Events.productAdded("p\(round)"))
            // Read between writes: a reader that kept its snapshot open would miss the next batch.
            try harness.catchUp(log)
            #expect(try harness.reader.checkpoint() == log.head)
            #expect(try harness.reader.users(page: 1, perPage: 10).total == round)
            #expect(try harness.reader.user(UserId("u\(round)")) != nil)
            #expect(try harness.reader.products(search: "tea", page: 1, perPage: 10).total == round)
        }
    }
}
