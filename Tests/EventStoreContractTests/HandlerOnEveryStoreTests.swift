import LogbookApplication
import LogbookTestSupport
import Testing

/// The command use case must behave the same whichever store is under it: random batches
/// of commands give identical outcomes and identical logs on every implementation.
@Suite("Command handler on every store")
struct HandlerOnEveryStoreTests {
    @Test("random batches give the same outcomes and the same log on every store", arguments: [1, 2, 3] as [UInt64])
    func sameBehaviourEverywhere(seed: UInt64) throws {
        let harnesses = try StoreKind.allCases.map { try StoreHarness($0) }
        let handlers = harnesses.map {
            CommandHandler(
                store: $0.store, clock: StepClock(), ids: CountingIds(), buckets: .forTests, cacheCapacity: 8)
        }
        var commands = RandomCommands(seed: seed)
        var accepted = 0
        for _ in 0..<100 {
            let batch = (0..<Int.random(in: 1...8, using: &commands.generator)).map { _ in commands.next() }
            let outcomes = handlers.map { $0.handle(batch) }
            for other in outcomes.dropFirst() {
                #expect(other == outcomes[0], "seed \(seed): the stores disagree on \(batch.map(\.type))")
            }
            accepted += outcomes[0].filter { $0.accepted != nil }.count
        }
        let logs = try harnesses.map { try $0.store.read(fromPosition: 1, limit: 100_000, categories: nil) }
        #expect(logs.allSatisfy { $0 == logs[0] }, "seed \(seed): the logs differ")
        #expect(logs[0].map(\.position) == (0..<logs[0].count).map { Int64($0 + 1) })
        #expect(accepted > 50, "seed \(seed): too few commands were accepted to prove anything")

        // The log holds up to an independent re-check: stock figures that follow from one
        // another, exact totals, one live user per address.
        #expect(LogAudit.violations(in: logs[0]) == [], "seed \(seed)")
    }
}
