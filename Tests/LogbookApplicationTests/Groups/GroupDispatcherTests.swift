import LogbookApplication
import LogbookMemory
import Testing

/// The groups process's use case over a store: given a store's groups, when turns hand in
/// the log's events and members' messages, then these deliveries and this durable state.
@Suite("Consumer group dispatcher")
struct GroupDispatcherTests {
    let ann = MemberId(Array("ann".utf8))
    let mailer = GroupName(stored: "mailer")

    @Test func aTurnCommitsItsAcknowledgementsBeforeItsDeliveriesGoOutAndDeliveriesAlone() throws {
        let store = ScriptedGroupStore()
        let dispatcher = try GroupDispatcher(store: store)
        try dispatcher.create(record())
        try dispatcher.offer([event(1, "user-a"), event(2, "user-b"), event(3, "user-a")], through: 3, to: mailer)
        try dispatcher.join(mailer, member: ann, now: 0)
        let deliveries = try dispatcher.finishTurn(now: 0)
        #expect(deliveries.map(\.position) == [1, 2])
        // The group's creation is durable; the deliveries record nothing.
        #expect(store.commits == 1)
        #expect(try store.outcomes(of: mailer).isEmpty)

        let outcome = try dispatcher.ack([2], in: mailer, from: ann, now: 1)
        #expect(outcome.acked == [2])
        #expect(try dispatcher.finishTurn(now: 1).isEmpty)
        #expect(try store.outcomes(of: mailer) == [.done(2)])
        #expect(try store.groups().map(\.checkpoint) == [0])

        // The ack of 1 readies 3, its stream's next: it goes once the ack is durable.
        _ = try dispatcher.ack([1], in: mailer, from: ann, now: 2)
        #expect(try dispatcher.finishTurn(now: 2).map(\.position) == [3])
        #expect(try store.outcomes(of: mailer).isEmpty)
        #expect(try store.groups().map(\.checkpoint) == [2])
        #expect(store.commits == 3)
    }

    @Test func aCheckpointMovedOnlyByTheLogIsCommittedWithinTheLazyInterval() throws {
        let store = ScriptedGroupStore()
        let dispatcher = try GroupDispatcher(store: store)
        try dispatcher.create(record())
        _ = try dispatcher.finishTurn(now: 0)
        try dispatcher.offer([event(1, "post-a")], through: 5, to: mailer)
        _ = try dispatcher.finishTurn(now: 1)
        #expect(try store.groups().map(\.checkpoint) == [0])
        #expect(dispatcher.nextDeadline() == GroupDispatcher.lazyCommitMilliseconds)
        _ = try dispatcher.finishTurn(now: GroupDispatcher.lazyCommitMilliseconds)
        #expect(try store.groups().map(\.checkpoint) == [5])
        #expect(store.commits == 2)
    }

    @Test func aNewDispatcherOverTheSameStoreReadsTheLogAgainAndSkipsWhatIsDone() throws {
        let store = ScriptedGroupStore()
        let first = try GroupDispatcher(store: store)
        try first.create(record())
        let log = [event(1, "user-a"), event(2, "user-a"), event(3, "user-b"), event(4, "user-c")]
        try first.offer(log, through: 4, to: mailer)
        try first.join(mailer, member: ann, now: 0)
        #expect(try first.finishTurn(now: 0).map(\.position) == [1, 3, 4])
        _ = try first.ack([3], in: mailer, from: ann, now: 0)
        try first.nack(4, in: mailer, from: ann, reason: "broken", now: 0)
        _ = try first.finishTurn(now: 0)

        // The groups process restarts: 1 was delivered (not recorded), 2 never, 3 is done, 4
        // failed once.
        let second = try GroupDispatcher(store: store)
        #expect(second.frontier(of: mailer) == 0)
        try second.offer(log, through: 4, to: mailer)
        try second.join(mailer, member: ann, now: 0)
        let again = try second.finishTurn(now: 0)
        #expect(again.map(\.position) == [1, 4])
        #expect(again.map(\.attempt) == [1, 2])
        _ = try second.ack([1, 4], in: mailer, from: ann, now: 0)
        #expect(try second.finishTurn(now: 0).map(\.position) == [2])
        _ = try second.ack([2], in: mailer, from: ann, now: 0)
        _ = try second.finishTurn(now: 0)
        #expect(try store.groups().map(\.checkpoint) == [4])
        #expect(try store.outcomes(of: mailer).isEmpty)
    }

    @Test func aLongStreamIsReadAgainFromTheLogInOrder() throws {
        let store = ScriptedGroupStore()
        let dispatcher = try GroupDispatcher(store: store)
        try dispatcher.create(record())
        let count = ConsumerGroup.laneMemoryLimit * 2 + 3
        let log = (1...count).map { event(Int64($0), "user-a") }
        try dispatcher.offer(log, through: Int64(count), to: mailer)
        try dispatcher.join(mailer, member: ann, now: 0)
        var handled: [Int64] = []
        var deliveries = try dispatcher.finishTurn(now: 0)
        while !deliveries.isEmpty {
            #expect(deliveries.count == 1)
            handled += deliveries.map(\.position)
            _ = try dispatcher.ack(deliveries.map(\.position), in: mailer, from: ann, now: 0)
            for refill in dispatcher.refillsNeeded {
                #expect(refill.group == mailer)
                #expect(refill.streams == ["user-a"])
                let page = log.filter { $0.position > refill.after && $0.position <= refill.through }
                dispatcher.refill(refill, with: page, readThrough: refill.through)
            }
            deliveries = try dispatcher.finishTurn(now: 0)
        }
        #expect(handled == (1...count).map { Int64($0) })
        #expect(try store.groups().map(\.checkpoint) == [Int64(count)])
    }

    @Test func theDryLanesOfAGroupShareOneReadOfTheLog() throws {
        let store = ScriptedGroupStore()
        let dispatcher = try GroupDispatcher(store: store)
        try dispatcher.create(record())
        let limit = ConsumerGroup.laneMemoryLimit
        // Two long streams, interleaved: each keeps `limit` events in memory, the rest stay in the log.
        let log = (1...(2 * limit + 4)).map { event(Int64($0), $0 % 2 == 0 ? "user-a" : "user-b") }
        try dispatcher.offer(log, through: Int64(log.count), to: mailer)
        try dispatcher.join(mailer, member: ann, now: 0)
        var handled: [String: [Int64]] = [:]
        var reads = 0
        var deliveries = try dispatcher.finishTurn(now: 0)
        while !deliveries.isEmpty {
            for delivery in deliveries {
                handled[delivery.position % 2 == 0 ? "user-a" : "user-b", default: []].append(delivery.position)
            }
            _ = try dispatcher.ack(deliveries.map(\.position), in: mailer, from: ann, now: 0)
            for refill in dispatcher.refillsNeeded {
                reads += 1
                #expect(refill.categories == ["user"])
                let page = log.filter { $0.position > refill.after && $0.position <= refill.through }
                dispatcher.refill(refill, with: page, readThrough: refill.through)
            }
            deliveries = try dispatcher.finishTurn(now: 0)
        }
        #expect(handled["user-a"] == log.map(\.position).filter { $0 % 2 == 0 })
        #expect(handled["user-b"] == log.map(\.position).filter { $0 % 2 == 1 })
        // Both lanes ran dry in the same turn and were refilled by one read.
        #expect(reads == 1)
        #expect(try store.groups().map(\.checkpoint) == [Int64(log.count)])
    }

    @Test func aFailedCommitForgetsWhatWasNotCommittedKeepsTheMembersAndDeliversAgain() throws {
        let store = ScriptedGroupStore()
        let dispatcher = try GroupDispatcher(store: store)
        try dispatcher.create(record())
        try dispatcher.offer([event(1, "user-a")], through: 1, to: mailer)
        try dispatcher.join(mailer, member: ann, now: 0)
        #expect(try dispatcher.finishTurn(now: 0).map(\.attempt) == [1])

        store.failNextCommit = true
        _ = try dispatcher.ack([1], in: mailer, from: ann, now: 1)
        #expect(throws: GroupStoreError.unavailable("the disk is away")) { try dispatcher.finishTurn(now: 1) }
        // The ack was not recorded, so it was never confirmed; the group reads the log again.
        #expect(try store.outcomes(of: mailer).isEmpty)
        #expect(dispatcher.record(of: mailer)?.checkpoint == 0)
        #expect(dispatcher.frontier(of: mailer) == 0)
        try dispatcher.offer([event(1, "user-a")], through: 1, to: mailer)
        try dispatcher.heartbeat(mailer, member: ann, now: 2)
        let again = try dispatcher.finishTurn(now: 2)
        #expect(again.map(\.position) == [1])
        _ = try dispatcher.ack([1], in: mailer, from: ann, now: 3)
        _ = try dispatcher.finishTurn(now: 3)
        #expect(try store.groups().map(\.checkpoint) == [1])
    }

    @Test func aStoreThatCannotBeReadBackMakesEveryRequestUnavailableUntilItCan() throws {
        let store = ScriptedGroupStore()
        let dispatcher = try GroupDispatcher(store: store)
        try dispatcher.create(record())
        try dispatcher.offer([event(1, "user-a")], through: 1, to: mailer)
        try dispatcher.join(mailer, member: ann, now: 0)
        _ = try dispatcher.finishTurn(now: 0)
        try dispatcher.nack(1, in: mailer, from: ann, reason: "broken", now: 0)
        _ = try dispatcher.finishTurn(now: 0)

        store.failNextCommit = true
        store.failReads = true
        _ = try dispatcher.finishTurn(now: 0)
        _ = try dispatcher.ack([1], in: mailer, from: ann, now: 1)
        #expect(throws: GroupStoreError.unavailable("the disk is away")) { try dispatcher.finishTurn(now: 1) }
        // Not "unknown group": the groups are there, the store cannot be read right now.
        let refusal = #expect(throws: ServiceError.self) { try dispatcher.heartbeat(mailer, member: ann, now: 2) }
        #expect(refusal?.code == .unavailable)
        #expect(throws: GroupStoreError.unavailable("the disk is away")) { try dispatcher.finishTurn(now: 2) }

        store.failReads = false
        #expect(try dispatcher.finishTurn(now: 3).isEmpty)
        try dispatcher.offer([event(1, "user-a")], through: 1, to: mailer)
        let again = try dispatcher.finishTurn(now: 3)
        #expect(again.map(\.position) == [1])
        #expect(again.map(\.attempt) == [2])
        try dispatcher.heartbeat(mailer, member: ann, now: 3)
    }

    @Test func outcomesThatCannotBeReadTakeNothingFromTheLog() throws {
        let store = ScriptedGroupStore()
        let creator = try GroupDispatcher(store: store)
        try creator.create(record())
        _ = try creator.finishTurn(now: 0)
        // A group read from the store reads its outcomes there (a group just created has none).
        let dispatcher = try GroupDispatcher(store: store)
        store.failReads = true
        #expect(throws: GroupStoreError.unavailable("the disk is away")) {
            try dispatcher.offer([event(1, "user-a")], through: 1, to: mailer)
        }
        #expect(dispatcher.frontier(of: mailer) == 0)
        #expect(try dispatcher.summary(of: mailer).pending == 0)
        store.failReads = false
        try dispatcher.offer([event(1, "user-a")], through: 1, to: mailer)
        #expect(try dispatcher.summary(of: mailer).pending == 1)
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
        try dispatcher.offer([event(1, "user-a"), event(2, "user-b")], through: 2, to: mailer)
        try dispatcher.join(mailer, member: ann, now: 0)
        _ = try dispatcher.finishTurn(now: 0)
        _ = try dispatcher.ack([2], in: mailer, from: ann, now: 0)
        _ = try dispatcher.finishTurn(now: 0)
        #expect(try store.outcomes(of: mailer).count == 1)

        try dispatcher.delete(mailer)
        try dispatcher.create(record(checkpoint: 1))
        _ = try dispatcher.finishTurn(now: 1)
        #expect(try store.groups().map(\.checkpoint) == [1])
        #expect(try store.outcomes(of: mailer).isEmpty)
        #expect(throws: ServiceError.self) { try dispatcher.create(record()) }
    }

    @Test func aGroupCreatedAgainWhileItsDeleteIsUnderWayTakesNoneOfTheOldGroupsOutcomes() throws {
        let (store, dispatcher) = try mailerHandingOutTwoEvents()
        _ = try dispatcher.ack([2], in: mailer, from: ann, now: 1)
        let acked = try #require(try dispatcher.endTurn(now: 1).commit)
        try write(acked, to: store, of: dispatcher)
        #expect(try store.outcomes(of: mailer).count == 1)

        // The delete is under way, not durable, when a group of the same name is created and
        // takes the log from its start: the store still holds the old group's outcome of 2.
        try dispatcher.delete(mailer)
        let deletion = try #require(try dispatcher.endTurn(now: 2).commit)
        try dispatcher.create(record())
        try dispatcher.offer([event(1, "user-a"), event(2, "user-b")], through: 2, to: mailer)
        try write(deletion, to: store, of: dispatcher)
        try dispatcher.join(mailer, member: ann, now: 3)
        #expect(try dispatcher.endTurn(now: 3).deliveries.map(\.position) == [1, 2])
    }

    @Test func repliesToldToWaitForTheNextCommitGetOneThoughItsChangesWereWithdrawn() throws {
        let store = ScriptedGroupStore()
        let dispatcher = try GroupDispatcher(store: store)
        try dispatcher.create(record())
        let creation = try #require(try dispatcher.endTurn(now: 0).commit)
        // While that commit is under way, a group is created, and deleted at a later turn: the
        // replies of both turns wait for the commit after it, which has nothing left to write.
        let pager = GroupRecord(
            name: GroupName(stored: "pager"), categories: ["user"],
            settings: GroupSettings(checked: 30_000, maxDeliver: 5, maxInFlight: 64), createdAt: 0, checkpoint: 0)
        try dispatcher.create(pager)
        let created = try dispatcher.endTurn(now: 1)
        #expect(created.commit == nil && created.repliesWaitFor == creation.sequence + 1)
        try dispatcher.delete(pager.name)
        #expect(try dispatcher.endTurn(now: 2).repliesWaitFor == creation.sequence + 1)

        try write(creation, to: store, of: dispatcher)
        let next = try #require(try dispatcher.endTurn(now: 3).commit)
        #expect(next.sequence == creation.sequence + 1 && next.changes.isEmpty)
        dispatcher.committed(next)
        #expect(try dispatcher.endTurn(now: 4).commit == nil)
        #expect(try store.groups().map(\.name) == [mailer])
    }

    @Test func aStreamWaitsForItsAckToBeDurableWhileTheOthersGoOn() throws {
        let store = ScriptedGroupStore()
        let dispatcher = try GroupDispatcher(store: store)
        try dispatcher.create(record())
        try write(try #require(try dispatcher.endTurn(now: 0).commit), to: store, of: dispatcher)
        try dispatcher.offer([event(1, "user-a"), event(2, "user-a"), event(3, "user-b")], through: 3, to: mailer)
        try dispatcher.join(mailer, member: ann, now: 0, maxInFlight: 1)
        #expect(try dispatcher.endTurn(now: 0).deliveries.map(\.position) == [1])

        _ = try dispatcher.ack([1], in: mailer, from: ann, now: 1)
        var turn = try dispatcher.endTurn(now: 1)
        let commit = try #require(turn.commit)
        #expect(commit.changes.groups[mailer]?.checkpoint == 1)
        #expect(turn.repliesWaitFor == commit.sequence)
        // 2 waits for the ack of 1 to be durable; 3, of another stream, goes at once.
        #expect(turn.deliveries.map(\.position) == [3])

        // The commit is still under way: 2 still waits, and so do the next turn's replies,
        // for the commit after it.
        _ = try dispatcher.ack([3], in: mailer, from: ann, now: 2)
        turn = try dispatcher.endTurn(now: 2)
        #expect(turn.commit == nil)
        #expect(turn.deliveries.isEmpty)
        #expect(turn.repliesWaitFor == commit.sequence + 1)
        #expect(store.commits == 1)

        try write(commit, to: store, of: dispatcher)
        turn = try dispatcher.endTurn(now: 3)
        #expect(turn.deliveries.map(\.position) == [2])
        let next = try #require(turn.commit)
        #expect(next.sequence == commit.sequence + 1)
        #expect(next.changes.groups[mailer]?.checkpoint == nil)
        #expect(next.changes.groups[mailer]?.outcomes == [3: .done(3)])
    }

    @Test func aFailedCommitUnderWayForgetsWhatWaitedBehindItAndDeliversAgain() throws {
        let (store, dispatcher) = try mailerHandingOutTwoEvents()
        _ = try dispatcher.ack([1], in: mailer, from: ann, now: 1)
        let commit = try #require(try dispatcher.endTurn(now: 1).commit)
        _ = try dispatcher.ack([2], in: mailer, from: ann, now: 2)
        #expect(try dispatcher.endTurn(now: 2).commit == nil)

        #expect(throws: GroupStoreError.unavailable("the disk is away")) {
            try dispatcher.commitFailed(.unavailable("the disk is away"), now: 3)
        }
        // Neither ack is durable: the group reads the log again from its checkpoint, with
        // its member, and delivers both again.
        #expect(dispatcher.frontier(of: mailer) == 0)
        try dispatcher.offer([event(1, "user-a"), event(2, "user-b")], through: 2, to: mailer)
        let again = try dispatcher.endTurn(now: 3)
        #expect(again.deliveries.map(\.position) == [1, 2])
        #expect(again.commit == nil)
        #expect(commit.sequence == 2)
        #expect(try store.outcomes(of: mailer).isEmpty)
    }

    // MARK: Helpers

    /// Writes `commit` as the groups process's commit thread does, then tells `dispatcher` it is durable.
    func write(_ commit: GroupCommit, to store: ScriptedGroupStore, of dispatcher: GroupDispatcher) throws {
        try store.commit(commit.changes)
        dispatcher.committed(commit)
    }

    /// A dispatcher whose group `mailer`, durable, has handed `ann` the events 1 (`user-a`) and
    /// 2 (`user-b`), with its store.
    func mailerHandingOutTwoEvents() throws -> (ScriptedGroupStore, GroupDispatcher) {
        let store = ScriptedGroupStore()
        let dispatcher = try GroupDispatcher(store: store)
        try dispatcher.create(record())
        try write(try #require(try dispatcher.endTurn(now: 0).commit), to: store, of: dispatcher)
        try dispatcher.offer([event(1, "user-a"), event(2, "user-b")], through: 2, to: mailer)
        try dispatcher.join(mailer, member: ann, now: 0)
        #expect(try dispatcher.endTurn(now: 0).deliveries.map(\.position) == [1, 2])
        return (store, dispatcher)
    }

    func record(checkpoint: Int64 = 0) -> GroupRecord {
        GroupRecord(
            name: mailer, categories: ["user"],
            settings: GroupSettings(checked: 30_000, maxDeliver: 5, maxInFlight: 64),
            createdAt: 0, checkpoint: checkpoint)
    }

    func event(_ position: Int64, _ stream: String) -> PendingEvent {
        PendingEvent(position: position, stream: stream, payload: Array("event \(position)".utf8))
    }
}

/// An in-memory group store whose next commit can be made to fail, and which counts commits.
final class ScriptedGroupStore: GroupStore {
    private let inner = InMemoryGroupStore()
    var failNextCommit = false
    /// While set, reading the groups and outcomes fails.
    var failReads = false
    private(set) var commits = 0

    func groups() throws(GroupStoreError) -> [GroupRecord] {
        if failReads { throw .unavailable("the disk is away") }
        return try inner.groups()
    }

    func outcomes(of group: GroupName, after: Int64, limit: Int) throws(GroupStoreError) -> [EventOutcome] {
        if failReads { throw .unavailable("the disk is away") }
        return try inner.outcomes(of: group, after: after, limit: limit)
    }

    /// Every outcome of `group`.
    func outcomes(of group: GroupName) throws(GroupStoreError) -> [EventOutcome] {
        try inner.outcomes(of: group, after: 0, limit: .max)
    }

    func commit(_ changes: GroupChanges) throws(GroupStoreError) {
        if failNextCommit {
            failNextCommit = false
            throw .unavailable("the disk is away")
        }
        try inner.commit(changes)
        commits += 1
    }
}
