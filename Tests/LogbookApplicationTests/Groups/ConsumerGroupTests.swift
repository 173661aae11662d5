import LogbookApplication
import Testing

/// The delivery rules of one group: given the log's events and members, when members ack,
/// nack, go silent or time runs out, then these deliveries and this checkpoint.
@Suite("Consumer group rules")
struct ConsumerGroupTests {
    let ann = MemberId(Array("ann".utf8))
    let bob = MemberId(Array("bob".utf8))

    @Test func deliversEachStreamInOrderOneEventAtATime() {
        var group = makeGroup()
        group.offer([event(1, "user-a"), event(2, "user-b"), event(3, "user-a")], through: 3)
        group.join(ann, now: 0)
        #expect(group.takeDeliveries(now: 0).map(\.position) == [1, 2])
        #expect(group.takeDeliveries(now: 0).isEmpty)
        let firstAck = group.ack([1], from: ann, now: 1)
        #expect(firstAck == AckOutcome(acked: [1], stale: []))
        // 3 waits until the ack of 1 is durable.
        #expect(group.takeDeliveries(now: 1).isEmpty)
        group.sealCommit()
        #expect(group.takeDeliveries(now: 1).isEmpty)
        group.commitDurable()
        #expect(group.takeDeliveries(now: 1).map(\.position) == [3])
    }

    @Test func theCheckpointIsTheEndOfTheContiguousAckedPrefix() {
        var group = makeGroup()
        group.offer([event(2, "user-a"), event(4, "user-b")], through: 5)
        #expect(group.record.checkpoint == 1)
        group.join(ann, now: 0)
        _ = group.takeDeliveries(now: 0)
        _ = group.ack([4], from: ann, now: 0)
        #expect(group.record.checkpoint == 1)
        _ = group.ack([2], from: ann, now: 0)
        #expect(group.record.checkpoint == 5)
        // Events of other categories, and no event at all, move it with the log.
        group.offer([event(6, "post-p")], through: 9)
        #expect(group.record.checkpoint == 9)
    }

    @Test func anAckTheMemberDoesNotHoldIsStaleAndChangesNothing() {
        var group = makeGroup()
        group.offer([event(1, "user-a"), event(2, "user-b")], through: 2)
        group.join(ann, now: 0)
        group.join(bob, now: 0)
        let deliveries = group.takeDeliveries(now: 0)
        let annHolds = deliveries.first { $0.member == ann }!.position
        let bobHolds = deliveries.first { $0.member == bob }!.position
        _ = group.takeChanges()
        let outcome = group.ack([bobHolds, 99], from: ann, now: 0)
        #expect(outcome == AckOutcome(acked: [], stale: [bobHolds, 99]))
        #expect(group.takeChanges().isEmpty)
        #expect(group.record.checkpoint == 0)
        let annsAck = group.ack([annHolds], from: ann, now: 0)
        #expect(annsAck.acked == [annHolds])
    }

    @Test func anEventNotAckedInTimeGoesAgainWithItsAttemptNumber() {
        var group = makeGroup(ackWait: 1_000)
        group.offer([event(1, "user-a")], through: 1)
        group.join(ann, now: 0)
        #expect(group.takeDeliveries(now: 0).map(\.attempt) == [1])
        group.tick(now: 999)
        #expect(group.takeDeliveries(now: 999).isEmpty)
        group.heard(from: ann, now: 1_000)
        group.tick(now: 1_000)
        group.commitWhatWasRecorded()
        let again = group.takeDeliveries(now: 1_000)
        #expect(again.map(\.position) == [1])
        #expect(again.map(\.attempt) == [2])
        #expect(group.counters.expired == 1)
        #expect(group.counters.redelivered == 1)
        // The first delivery's ack, late, is still this member's: it holds position 1 again.
        let lateAck = group.ack([1], from: ann, now: 1_001)
        #expect(lateAck.acked == [1])
    }

    @Test func afterMaxDeliverFailuresAnEventIsParkedAndOnlyItsStreamWaits() {
        var group = makeGroup(maxDeliver: 2)
        group.offer([event(1, "user-a"), event(2, "user-b"), event(3, "user-a"), event(4, "user-b")], through: 4)
        group.join(ann, now: 0)
        #expect(group.takeDeliveries(now: 0).map(\.position) == [1, 2])
        let nacked = group.nack(1, from: ann, reason: "poison", now: 0)
        #expect(nacked)
        _ = group.ack([2], from: ann, now: 0)
        group.commitWhatWasRecorded()
        #expect(group.takeDeliveries(now: 0).map { [$0.position, Int64($0.attempt)] } == [[1, 2], [4, 1]])
        let nackedAgain = group.nack(1, from: ann, reason: "poison", now: 0)
        #expect(nackedAgain)
        #expect(group.parked.map(\.position) == [1])
        #expect(group.parked.first?.lastFailure == "poison")
        #expect(group.parked.first?.attempts == 2)
        _ = group.ack([4], from: ann, now: 0)
        #expect(group.takeDeliveries(now: 0).isEmpty)
        #expect(group.record.checkpoint == 0)
        #expect(group.counters.parked == 1)
    }

    @Test func retryGivesAParkedEventItsDeliveriesAgainAndSkipFinishesIt() {
        var group = makeGroup(maxDeliver: 1)
        group.offer([event(1, "user-a"), event(2, "user-a")], through: 2)
        group.join(ann, now: 0)
        _ = group.takeDeliveries(now: 0)
        _ = group.nack(1, from: ann, reason: "poison", now: 0)
        let retriedUnparked = group.retry(2)
        #expect(!retriedUnparked)
        let retried = group.retry(1)
        #expect(retried)
        #expect(group.parked.isEmpty)
        group.commitWhatWasRecorded()
        #expect(group.takeDeliveries(now: 0).map(\.attempt) == [1])
        _ = group.nack(1, from: ann, reason: "poison", now: 0)
        let skipped = group.skip(1)
        #expect(skipped)
        #expect(group.record.checkpoint == 1)
        // Its stream's next event waited in the log while it was parked: read again, it goes.
        #expect(group.takeDeliveries(now: 0).isEmpty)
        #expect(group.refillNeeded(for: "user-a")?.after == 1)
        group.refill("user-a", with: [event(2, "user-a")], readThrough: 2)
        group.commitWhatWasRecorded()
        #expect(group.takeDeliveries(now: 0).map(\.position) == [2])
    }

    @Test func whatASilentMemberHeldGoesToTheOthers() {
        var group = makeGroup(memberTimeout: 5_000)
        group.offer([event(1, "user-a")], through: 1)
        group.join(ann, now: 0)
        _ = group.takeDeliveries(now: 0)
        group.join(bob, now: 4_000)
        group.tick(now: 5_000)
        #expect(!group.isMember(ann))
        group.commitWhatWasRecorded()
        let again = group.takeDeliveries(now: 5_000)
        #expect(again.map(\.member) == [bob])
        #expect(again.map(\.attempt) == [2])
        let silentAck = group.ack([1], from: ann, now: 5_001)
        #expect(silentAck.stale == [1])
    }

    @Test func aDeliveryThatCouldNotBeSentIsNoAttempt() {
        var group = makeGroup(maxDeliver: 2, ackWait: 1_000)
        group.offer([event(1, "user-a")], through: 1)
        group.join(ann, now: 0)
        _ = group.takeDeliveries(now: 0)
        group.join(bob, now: 0)
        // Ann is gone but not yet taken for gone: her expired delivery is handed back to her.
        group.tick(now: 1_000)
        group.commitWhatWasRecorded()
        let handedBack = group.takeDeliveries(now: 1_000)
        #expect(handedBack.map(\.member) == [ann])
        #expect(handedBack.map(\.attempt) == [2])
        // Her connection is found gone when it is sent: no attempt, and she leaves.
        let takenBack = group.unsent(1, to: ann)
        #expect(takenBack)
        group.leave(ann, reason: "the member's connection is gone")
        #expect(group.parkedCount == 0)
        group.commitWhatWasRecorded()
        let again = group.takeDeliveries(now: 1_000)
        #expect(again.map(\.member) == [bob])
        #expect(again.map(\.attempt) == [2])
        #expect(group.counters.delivered == 2)
        #expect(group.counters.redelivered == 1)
        let notHeld = group.unsent(1, to: ann)
        #expect(!notHeld)
    }

    @Test func aStreamStaysWithItsMemberAndNewStreamsGoToTheLeastLoaded() {
        var group = makeGroup()
        group.join(ann, now: 0)
        group.join(bob, now: 0)
        group.offer([event(1, "user-a"), event(2, "user-b"), event(3, "user-c")], through: 3)
        let first = group.takeDeliveries(now: 0)
        #expect(Set(first.map(\.member)) == [ann, bob])
        let holderOfA = first.first { $0.position == 1 }!.member
        _ = group.ack(first.map(\.position).filter { _ in true }, from: ann, now: 0)
        _ = group.ack(first.map(\.position), from: bob, now: 0)
        for round in 0..<5 {
            let position = Int64(4 + round)
            group.offer([event(position, "user-a")], through: position)
            group.commitWhatWasRecorded()
            let next = group.takeDeliveries(now: 0)
            #expect(next.map(\.member) == [holderOfA])
            _ = group.ack([position], from: holderOfA, now: 0)
        }
    }

    @Test func aMemberHoldsAtMostMaxInFlight() {
        var group = makeGroup(maxInFlight: 2)
        group.offer((1...5).map { event(Int64($0), "user-\($0)") }, through: 5)
        group.join(ann, now: 0)
        #expect(group.takeDeliveries(now: 0).map(\.position) == [1, 2])
        _ = group.ack([2], from: ann, now: 0)
        #expect(group.takeDeliveries(now: 0).map(\.position) == [3])
        #expect(group.inFlightCount == 2)
    }

    @Test func aMemberThatAsksForFewerHoldsNoMoreAndTheRestGoesToTheOthers() {
        var group = makeGroup(maxInFlight: 4)
        group.offer((1...6).map { event(Int64($0), "user-\($0)") }, through: 6)
        group.join(ann, now: 0, maxInFlight: 1)
        #expect(group.takeDeliveries(now: 0).map(\.position) == [1])
        group.join(bob, now: 0, maxInFlight: 99)
        let toBob = group.takeDeliveries(now: 0)
        #expect(toBob.map(\.position) == [2, 3, 4, 5])
        #expect(toBob.allSatisfy { $0.member == bob })
        #expect(group.memberLimits == [ann: 1, bob: 4])
        _ = group.ack([1], from: ann, now: 1)
        #expect(group.takeDeliveries(now: 1).map(\.member) == [ann])
    }

    @Test func aFullGroupTakesNoMoreFromTheLog() {
        var group = makeGroup(window: 3)
        group.offer([event(1, "user-a"), event(2, "user-b")], through: 2)
        #expect(group.wantsEvents)
        group.offer([event(3, "user-c")], through: 3)
        #expect(!group.wantsEvents)
        group.join(ann, now: 0)
        _ = group.takeDeliveries(now: 0)
        _ = group.ack([1], from: ann, now: 0)
        #expect(group.wantsEvents)
    }

    @Test func aParkedEventKeepsOnlyItselfInMemoryAndItsStreamIsReadAgainOnceSkipped() {
        var group = makeGroup(maxDeliver: 1, window: 4)
        group.offer([event(1, "user-a"), event(2, "user-a"), event(3, "user-b")], through: 3)
        group.join(ann, now: 0)
        #expect(group.takeDeliveries(now: 0).map(\.position) == [1, 3])
        _ = group.nack(1, from: ann, reason: "poison", now: 0)
        _ = group.ack([3], from: ann, now: 0)
        // The parked event stays; the rest of its stream is left in the log, whatever its length.
        group.offer((4...40).map { event(Int64($0), "user-a") }, through: 40)
        #expect(group.parked.map(\.position) == [1])
        #expect(group.queuedInMemory == 1)
        #expect(group.pendingCount == 39)
        #expect(group.wantsEvents)
        #expect(group.record.checkpoint == 0)
        #expect(group.refillsNeeded.isEmpty)
        let skipped = group.skip(1)
        #expect(skipped)
        #expect(group.refillsNeeded == ["user-a"])
        let needed = group.refillNeeded(for: "user-a")
        #expect(needed?.after == 1)
        #expect(needed?.through == 40)
        #expect(group.record.checkpoint == 1)
        group.commitWhatWasRecorded()
        var handled: [Int64] = []
        while handled.count < 38 {
            for stream in group.refillsNeeded {
                let (after, through) = group.refillNeeded(for: stream)!
                // One page of the log at a time: 10 positions.
                let page = (after + 1...min(after + 10, through)).filter { $0 != 3 }
                group.refill(stream, with: page.map { event($0, stream) }, readThrough: min(after + 10, through))
            }
            let deliveries = group.takeDeliveries(now: 0)
            handled += deliveries.map(\.position)
            _ = group.ack(deliveries.map(\.position), from: ann, now: 0)
            group.commitWhatWasRecorded()
        }
        #expect(handled == [2] + (4...40).map { Int64($0) })
        #expect(group.pendingCount == 0)
        #expect(group.record.checkpoint == 40)
    }

    @Test func aLongStreamKeepsFewEventsInMemoryAndIsRefilledInOrder() {
        var group = makeGroup()
        let count = ConsumerGroup.laneMemoryLimit + 5
        group.offer((1...count).map { event(Int64($0), "user-a") }, through: Int64(count))
        #expect(group.queuedInMemory == ConsumerGroup.laneMemoryLimit)
        #expect(group.pendingCount == count)
        group.join(ann, now: 0)
        var handled: [Int64] = []
        while handled.count < count {
            for stream in group.refillsNeeded {
                let (after, through) = group.refillNeeded(for: stream)!
                let rest = (Int(after) + 1...Int(through))
                group.refill(stream, with: rest.map { event(Int64($0), "user-a") }, readThrough: through)
            }
            let deliveries = group.takeDeliveries(now: 0)
            #expect(deliveries.count == 1)
            handled += deliveries.map(\.position)
            _ = group.ack(deliveries.map(\.position), from: ann, now: 0)
            group.commitWhatWasRecorded()
            #expect(group.record.checkpoint == handled.last)
        }
        #expect(handled == (1...count).map { Int64($0) })
        #expect(group.record.checkpoint == Int64(count))
    }

    @Test func itRecordsDoneEventsAndFailuresButNotDeliveries() {
        var group = makeGroup()
        group.offer([event(1, "user-a"), event(2, "user-b"), event(3, "user-c")], through: 3)
        let taken = group.takeChanges()
        // Only the log moved: nothing that must be durable at once.
        #expect(taken.outcomes.isEmpty)
        #expect(!taken.isUrgent)
        group.join(ann, now: 0)
        _ = group.takeDeliveries(now: 0)
        #expect(group.takeChanges() == GroupChanges.Progress())
        _ = group.ack([2], from: ann, now: 0)
        let acked = group.takeChanges()
        #expect(acked.outcomes == [2: .done(2)])
        #expect(acked.checkpoint == nil)
        #expect(acked.isUrgent)
        _ = group.nack(3, from: ann, reason: "broken", now: 0)
        #expect(group.takeChanges().outcomes == [3: .failed(3, attempts: 1, parked: false, lastFailure: "broken")])
        // The checkpoint passes 1 and 2: the store keeps no outcome at or before it.
        _ = group.ack([1], from: ann, now: 0)
        let moved = group.takeChanges()
        #expect(moved.checkpoint == 2)
        #expect(moved.outcomes.isEmpty)
        #expect(moved.isUrgent)
    }

    @Test func theStoresOutcomesSkipDoneEventsAndKeepFailedOnesAttemptsAndParking() {
        var group = makeGroup(maxDeliver: 3)
        #expect(group.outcomesNeeded(through: 9) == 0)
        group.loadOutcomes(
            [
                .done(2), .failed(3, attempts: 3, parked: true, lastFailure: "poison"),
                .failed(6, attempts: 2, parked: false, lastFailure: "expired"),
            ], complete: true)
        #expect(group.outcomesNeeded(through: 9) == nil)
        group.offer(
            [event(1, "user-c"), event(2, "user-b"), event(3, "user-a"), event(5, "user-a"), event(6, "user-b")],
            through: 9)
        group.join(ann, now: 0)
        let deliveries = group.takeDeliveries(now: 0)
        #expect(deliveries.map(\.position) == [1, 6])
        #expect(deliveries.map(\.attempt) == [1, 3])
        #expect(group.parked.map(\.position) == [3])
        #expect(group.parked.first?.lastFailure == "poison")
        #expect(group.takeChanges().outcomes.isEmpty)
        _ = group.ack([1], from: ann, now: 0)
        #expect(group.record.checkpoint == 2)
    }

    @Test func outcomesAreReadInPagesAsTheLogIsTaken() {
        var group = makeGroup()
        group.loadOutcomes([.done(2), .done(4)], complete: false)
        #expect(group.outcomesNeeded(through: 3) == nil)
        #expect(group.outcomesNeeded(through: 5) == 4)
        group.offer([event(1, "user-a"), event(2, "user-b"), event(3, "user-c")], through: 3)
        group.loadOutcomes([.done(5)], complete: true)
        group.offer([event(4, "user-d"), event(5, "user-e"), event(6, "user-f")], through: 6)
        #expect(group.pendingCount == 3)
        group.join(ann, now: 0)
        #expect(group.takeDeliveries(now: 0).map(\.position) == [1, 3, 6])
    }

    // MARK: Helpers
}

extension ConsumerGroup {
    /// What was recorded is durable, as if committed: the streams that waited for it go on.
    mutating func commitWhatWasRecorded() {
        sealCommit()
        commitDurable()
    }
}

extension ConsumerGroupTests {
    func makeGroup(
        maxDeliver: Int = 5, maxInFlight: Int = 64, ackWait: Int = 30_000, window: Int = 512,
        memberTimeout: Int64 = 5_000
    ) -> ConsumerGroup {
        let record = GroupRecord(
            name: GroupName(stored: "mailer"), categories: ["user"],
            settings: GroupSettings(checked: ackWait, maxDeliver: maxDeliver, maxInFlight: maxInFlight), createdAt: 0,
            checkpoint: 0)
        return ConsumerGroup(record, window: window, memberTimeoutMilliseconds: memberTimeout)
    }

    func event(_ position: Int64, _ stream: String) -> PendingEvent {
        PendingEvent(position: position, stream: stream, payload: Array("event \(position)".utf8))
    }
}
