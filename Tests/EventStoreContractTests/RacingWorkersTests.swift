import Foundation
import LogbookApplication
import LogbookDomain
import LogbookTestSupport
import Testing

/// Two workers on one log: between each of the main worker's decisions and its append,
/// another worker (its own handler and cache) commits a random batch, often reusing the
/// same command ids. Whatever the interleaving, the log must pass the audit, each command
/// id must own one contiguous run of events equal to its record, and every outcome a
/// client was told for a remembered decision must be what the log recorded.
@Suite("Racing workers on every store")
struct RacingWorkersTests {
    /// Runs another worker's random batch before forwarding each append. Used from one thread only.
    final class InterleavingStore: ForwardingEventStore, @unchecked Sendable {
        let inner: any EventStore
        var otherWorker: CommandHandler?
        var otherCommands: RandomCommands
        var told: [(CommandRequest, CommandOutcome)] = []

        init(inner: any EventStore, seed: UInt64) {
            self.inner = inner
            otherCommands = RandomCommands(seed: seed &* 7919)
        }

        func append(_ batch: [AppendRequest]) throws(EventStoreError) -> [AppendResult] {
            if let otherWorker {
                let requests = (0..<Int.random(in: 0...3, using: &otherCommands.generator)).map { _ in
                    otherCommands.next()
                }
                told += zip(requests, otherWorker.handle(requests)).map { ($0, $1) }
            }
            return try inner.append(batch)
        }
    }

    /// Refusals that are decided on state, and so recorded against their id.
    static let recordedCodes: Set<ErrorCode> = [
        .notFound, .alreadyExists, .emailTaken, .productNotAvailable, .insufficientStock,
    ]

    @Test(
        "every interleaving leaves a sound log and tells each client what the log recorded",
        arguments: StoreKind.allCases, [1, 2, 3, 4] as [UInt64])
    func race(kind: StoreKind, seed: UInt64) throws {
        let harness = try StoreHarness(kind)
        let racing = InterleavingStore(inner: harness.store, seed: seed)
        racing.otherWorker = CommandHandler(
            store: harness.store, clock: StepClock(),
            ids: CountingIds(prefix: "o"), buckets: .forTests, cacheCapacity: 4)
        let main = CommandHandler(
            store: racing, clock: StepClock(),
            ids: CountingIds(prefix: "m"), buckets: .forTests, cacheCapacity: 4)
        var commands = RandomCommands(seed: seed)
        var told: [(CommandRequest, CommandOutcome)] = []
        for _ in 0..<100 {
            let batch = (0..<Int.random(in: 1...8, using: &commands.generator)).map { _ in commands.next() }
            told += zip(batch, main.handle(batch)).map { ($0, $1) }
        }
        told += racing.told

        let log = try harness.store.read(fromPosition: 1, limit: 1_000_000, categories: nil)
        #expect(LogAudit.violations(in: log) == [], "seed \(seed)")
        let eventsById = Dictionary(grouping: log, by: \.metadata.commandId)
        for (id, events) in eventsById {
            let positions = events.map(\.position)
            #expect(
                positions == Array(positions[0]...positions[positions.count - 1]), "seed \(seed): \(id) appended twice")
            #expect(try harness.store.commandRecord(id)?.events == events, "seed \(seed): \(id)")
        }
        for (request, outcome) in told {
            if case .rejected(let error) = outcome, !Self.recordedCodes.contains(error.code) { continue }
            guard let record = try harness.store.commandRecord(request.commandId) else {
                Issue.record("seed \(seed): \(request.commandId) was told \(outcome), but nothing is recorded")
                continue
            }
            let recorded = AnswerCodec.outcome(of: record, wasRetry: false)
            #expect(Self.ignoringRetry(recorded) == Self.ignoringRetry(outcome), "seed \(seed): \(request.commandId)")
        }
    }

    private static func ignoringRetry(_ outcome: CommandOutcome) -> CommandOutcome {
        guard case .accepted(var accepted) = outcome else { return outcome }
        accepted.wasRetry = false
        return .accepted(accepted)
    }
}
