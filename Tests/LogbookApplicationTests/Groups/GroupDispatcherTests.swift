import LogbookApplication
import LogbookMemory
import Testing

/// The groups process's use case over a store: given a store's groups, when turns hand in
/// the log's events and members' messages, then these deliveries and this durable state.
@Suite("Consumer group dispatcher")
struct GroupDispatcherTests {
    let ann = MemberId(Array("ann".utf8))
    let mailer = GroupName(stored: "mailer")

    @Test func aTurnCommitsWhatItRecordedBeforeItsDeliveriesGoOut() throws {
        let store = ScriptedGroupStore()
        let dispatcher = try GroupDispatcher(store: store)
        try dispatcher.create(record())
        dispatcher.offer([event(1, "user-a"), event(2, "user-b")], through: 2, to: mailer)
        try dispatcher.join(mailer, member: ann, now: 0)
        let deliveries = try dispatcher.finishTurn(now: 0)
        #expect(deliveries.map(\.position) == [1, 2])
        // Durable before they are sent: each event with its first attempt.
        #expect(try store.pending(of: mailer).map(\.attempts) == [1, 1])
        #expect(try store.groups().map(\.scanned) == [2])

        let outcome = try dispatcher.ack([1, 2], in: mailer, from: ann, now: 1)
        #expect(outcome.acked == [1, 2])
        #expect(try dispatcher.finishTurn(now: 1).isEmpty)
        #expect(try store.pending(of: mailer).isEmpty)
        #expect(try store.groups().map(\.checkpoint) == [2])
    }

    @Test func aNewDispatcherOverTheSameStoreDeliversWhatWasNotAckedWithItsNextAttempt() throws {
        let store = ScriptedGroupStore()
        let first = try GroupDispatcher(store: store)
        try first.create(record())
        first.offer([event(1, "user-a"), event(2, "user-a"), event(3, "user-b")], through: 3, to: mailer)
        try first.join(mailer, member: ann, now: 0)
        _ = try first.finishTurn(now: 0)
        _ = try first.ack([3], in: mailer, from: ann, now: 0)
        _ = try first.finishTurn(now: 0)

        // The groups process restarts: position 1 was delivered once, 2 never, 3 is done.
        let second = try GroupDispatcher(store: store)
        #expect(second.record(of: mailer)?.scanned == 3)
        try second.join(mailer, member: ann, now: 0)
        let again = try second.finishTurn(now: 0)
        #expect(again.map(\.position) == [1])
        #expect(again.map(\.attempt) == [2])
        _ = try second.ack([1], in: mailer, from: ann, now: 0)
        #expect(try second.finishTurn(now: 0).map(\.position) == [2])
    }

    @Test func aLongStreamIsRefilledFromTheStoreInOrder() throws {
        let store = ScriptedGroupStore()
        let dispatcher = try GroupDispatcher(store: store)
        try dispatcher.create(record())
        let count = ConsumerGroup.laneMemoryLimit * 2 + 3
        dispatcher.offer((1...count).map { event(Int64($0), "user-a") }, through: Int64(count), to: mailer)
        try dispatcher.join(mailer, member: ann, now: 0)
        var handled: [Int64] = []
        var deliveries = try dispatcher.finishTurn(now: 0)
        while !deliveries.isEmpty {
            #expect(deliveries.count == 1)
            handled += deliveries.map(\.position)
            _ = try dispatcher.ack(deliveries.map(\.position), in: mailer, from: ann, now: 0)
            deliveries = try dispatcher.finishTurn(now: 0)
        }
        #expect(handled == (1...count).map { Int64($0) })
        #expect(try store.groups().map(\.checkpoint) == [Int64(count)])
        #expect(try store.pending(of: mailer).isEmpty)
    }

    @Test func aFailedCommitForgetsTheTurnKeepsTheMembersAndDeliversAgain() throws {
        let store = ScriptedGroupStore()
        let dispatcher = try GroupDispatcher(store: store)
        try dispatcher.create(record())
        dispatcher.offer([event(1, "user-a")], through: 1, to: mailer)
        try dispatcher.join(mailer, member: ann, now: 0)
        #expect(try dispatcher.finishTurn(now: 0).map(\.attempt) == [1])

        store.failNextCommit = true
        _ = try dispatcher.ack([1], in: mailer, from: ann, now: 1)
        #expect(throws: GroupStoreError.unavailable("the disk is away")) { try dispatcher.finishTurn(now: 1) }
        // The ack was not recorded, so it was never confirmed: the store still holds the event.
        #expect(try store.pending(of: mailer).map(\.position) == [1])
        #expect(dispatcher.record(of: mailer)?.checkpoint == 0)
        try dispatcher.heartbeat(mailer, member: ann, now: 2)
        let again = try dispatcher.finishTurn(now: 2)
        #expect(again.map(\.position) == [1])
        #expect(again.map(\.attempt) == [2])
        _ = try dispatcher.ack([1], in: mailer, from: ann, now: 3)
        _ = try dispatcher.finishTurn(now: 3)
        #expect(try store.groups().map(\.checkpoint) == [1])
    }

    @Test func aStoreThatCannotBeReadBackMakesEveryRequestUnavailableUntilItCan() throws {
        let store = ScriptedGroupStore()
        let dispatcher = try GroupDispatcher(store: store)
        try dispatcher.create(record())
        dispatcher.offer([event(1, "user-a")], through: 1, to: mailer)
        try dispatcher.join(mailer, member: ann, now: 0)
        _ = try dispatcher.finishTurn(now: 0)

        store.failNextCommit = true
        store.failReads = true
        _ = try dispatcher.ack([1], in: mailer, from: ann, now: 1)
        #expect(throws: GroupStoreError.unavailable("the disk is away")) { try dispatcher.finishTurn(now: 1) }
        // Not "unknown group": the groups are there, the store cannot be read right now.
        let refusal = #expect(throws: ServiceError.self) { try dispatcher.heartbeat(mailer, member: ann, now: 2) }
        #expect(refusal?.code == .unavailable)
        #expect(throws: GroupStoreError.unavailable("the disk is away")) { try dispatcher.finishTurn(now: 2) }

        store.failReads = false
        let again = try dispatcher.finishTurn(now: 3)
        #expect(again.map(\.position) == [1])
        #expect(again.map(\.attempt) == [2])
        try dispatcher.heartbeat(mailer, member: ann, now: 3)
    }

    @Test func aGroupCreatedAndDeletedInOneTurnLeavesNoTrace() throws {
        let store = ScriptedGroupStore()
        let dispatcher = try GroupDispatcher(store: store)
        try dispatcher.create(record())
        try dispatcher.delete(mailer)
        _ = try dispatcher.finishTurn(now: 0)
        #expect(try store.groups().isEmpty)
        #expect(store.commits == 0)
    }

    @Test func aGroupDeletedAndCreatedAgainInOneTurnStartsAfresh() throws {
        let store = ScriptedGroupStore()
        let dispatcher = try GroupDispatcher(store: store)
        try dispatcher.create(record())
        dispatcher.offer([event(1, "user-a")], through: 1, to: mailer)
        _ = try dispatcher.finishTurn(now: 0)
        #expect(try store.pending(of: mailer).count == 1)

        try dispatcher.delete(mailer)
        try dispatcher.create(record(checkpoint: 1))
        _ = try dispatcher.finishTurn(now: 1)
        #expect(try store.groups().map(\.checkpoint) == [1])
        #expect(try store.pending(of: mailer).isEmpty)
        #expect(throws: ServiceError.self) { try dispatcher.create(record()) }
    }

    // MARK: Helpers

    func record(checkpoint: Int64 = 0) -> GroupRecord {
        GroupRecord(
            name: mailer, categories: ["user"],
            settings: GroupSettings(checked: 30_000, maxDeliver: 5, maxInFlight: 64),
            createdAt: 0, checkpoint: checkpoint, scanned: checkpoint)
    }

    func event(_ position: Int64, _ stream: String) -> PendingEvent {
        PendingEvent(position: position, stream: stream, payload: Array("event \(position)".utf8))
    }
}

/// An in-memory group store whose next commit can be made to fail, and which counts commits.
final class ScriptedGroupStore: GroupStore {
    private let inner = InMemoryGroupStore()
    var failNextCommit = false
    /// While set, reading the groups back fails.
    var failReads = false
    private(set) var commits = 0

    func groups() throws(GroupStoreError) -> [GroupRecord] {
        if failReads { throw .unavailable("the disk is away") }
        return try inner.groups()
    }

    func pending(of group: GroupName, stream: String?, after: Int64, limit: Int) throws(GroupStoreError)
        -> [PendingEvent]
    {
        try inner.pending(of: group, stream: stream, after: after, limit: limit)
    }

    /// Every pending event of `group`.
    func pending(of group: GroupName) throws(GroupStoreError) -> [PendingEvent] {
        try inner.pending(of: group, stream: nil, after: 0, limit: .max)
    }

    func parkedCount(of group: GroupName) throws(GroupStoreError) -> Int { try inner.parkedCount(of: group) }

    func commit(_ changes: GroupChanges) throws(GroupStoreError) {
        if failNextCommit {
            failNextCommit = false
            throw .unavailable("the disk is away")
        }
        try inner.commit(changes)
        commits += 1
    }
}
