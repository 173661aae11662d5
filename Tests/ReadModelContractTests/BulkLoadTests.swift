import LogbookApplication
import LogbookDomain
import LogbookTestSupport
import Testing

/// A bulk load (how a rebuild fills a new generation) must end with exactly the rows and
/// checkpoint that applying every batch at once gives, keep refusing what `apply` refuses,
/// and leave everything on disk when it ends.
@Suite("Bulk load")
struct BulkLoadTests {
    /// With `pages`, the batches come as a rebuild reads them: pages kept as their bytes.
    @Test(arguments: [(3, 1), (11, 7), (2024, 50), (0xBEEF, 200_000)] as [(UInt64, Int)], [false, true])
    func bulkLoadEqualsBatchByBatch(load: (seed: UInt64, flushRows: Int), pages: Bool) throws {
        let (seed, flushRows) = load
        var random = SeededGenerator(seed: seed)
        let log = try RandomLog.make(steps: 1_500, using: &random)
        let reference = try ReadModelHarness(.memory)
        let bulk = try ReadModelHarness(.sqlite, bulkFlushRows: flushRows)
        try bulk.store.beginBulkLoad()
        var next = 0
        while next < log.all.count {
            let batch = Array(log.all[next..<min(next + Int.random(in: 1...400, using: &random), log.all.count)])
            let through = batch.last!.position
            try reference.store.apply(batch, through: through)
            if pages {
                try bulk.store.apply(try EncodedPageProjectionTests.encoded(batch), through: through)
            } else {
                try bulk.store.apply(batch, through: through)
            }
            #expect(try bulk.store.checkpoint() == through)
            // What `apply` refuses, it still refuses, and nothing of it is kept.
            if random.chance(10) {
                #expect(throws: ReadModelStoreError.self) { try bulk.store.apply(batch, through: through) }
            }
            next += batch.count
        }
        try bulk.store.endBulkLoad()
        try bulk.store.markComplete()
        try bulk.reopen()
        let expected = try reference.snapshot()
        #expect(expected.counts.users > 0 && expected.counts.orders > 0)
        #expect(try bulk.snapshot() == expected, "seed \(seed), flush every \(flushRows) rows, pages \(pages)")
        #expect(try bulk.store.checkpoint() == log.head)
        for user in log.ids where user.hasPrefix("u") {
            let id = try UserId(user)
            #expect(
                try bulk.reader.orders(userId: id, page: 1, perPage: 100)
                    == reference.reader.orders(userId: id, page: 1, perPage: 100))
        }
    }

    @Test func anUndecodableBatchIsRefusedWholeAndTheLoadGoesOn() throws {
        var log = Log()
        log.record(try Events.registered("u1"))
        log.record(try Events.productAdded("p1", name: "Tea", stock: 2))
        var broken = log
        broken.record(type: "ProductAdded", stream: "product-p2", data: #"{"productId":"p2","name":"X"}"#)
        let bulk = try ReadModelHarness(.sqlite, bulkFlushRows: 1)
        try bulk.store.beginBulkLoad()
        try bulk.store.apply([log.all[0]], through: 1)
        #expect(throws: ReadModelStoreError.self) { try bulk.store.apply(Array(broken.all[1...]), through: 3) }
        #expect(try bulk.store.checkpoint() == 1)
        try bulk.store.apply([log.all[1]], through: 2)
        try bulk.store.endBulkLoad()
        #expect(try bulk.snapshot().counts == ReadModelCounts(users: 1, posts: 0, products: 1, orders: 0))
        #expect(try bulk.snapshot().checkpoint == 2)
    }

    @Test func aCompleteStoreIsNeverBulkLoaded() throws {
        let harness = try ReadModelHarness(.sqlite)
        try harness.store.markComplete()
        #expect(throws: ReadModelStoreError.self) { try harness.store.beginBulkLoad() }
    }
}
