import LogbookApplication
import LogbookTestSupport
import Testing

/// The promises of `GroupStore`, on every store (`GroupStoreKind`): what a commit writes is
/// read back exactly, a checkpoint forgets the outcomes at or before it, a commit is all or
/// nothing, groups never share outcomes, and (for the stores with a file or a database)
/// everything survives reopening.
@Suite struct GroupStoreContractTests {
    // MARK: Groups

    @Test(arguments: GroupStoreKind.allCases)
    func createdGroupsAreReadBackByName(kind: GroupStoreKind) throws {
        let harness = try GroupStoreHarness(kind)
        #expect(try harness.store.groups().isEmpty)
        let settings = GroupSettings(checked: 1_500, maxDeliver: 7, maxInFlight: 3)
        let orders = try Fixture.record(
            "orders", categories: ["user", "order", "product"], settings: settings, createdAt: 1_700_000_000_123,
            checkpoint: 41)
        let audit = try Fixture.record("Audit.log-2", categories: ["post"], checkpoint: 0)
        try harness.store.commit(Fixture.creating(orders, audit))

        let records = try harness.store.groups()
        #expect(records.map(\.name.rawValue) == ["Audit.log-2", "orders"])
        let stored = try #require(records.last)
        #expect(stored == orders)
        #expect(stored.categories == ["order", "product", "user"])
        #expect(stored.settings == settings)
        #expect(stored.createdAt == 1_700_000_000_123)
        #expect(stored.checkpoint == 41)
        #expect(records.first == audit)
        #expect(try harness.store.outcomes(of: orders.name, after: 0, limit: 10).isEmpty)
    }

    @Test(arguments: GroupStoreKind.allCases)
    func creatingAnExistingNameWritesNothingOfItsCommit(kind: GroupStoreKind) throws {
        let harness = try GroupStoreHarness(kind)
        let orders = try Fixture.record("orders", checkpoint: 5)
        try harness.store.commit(Fixture.creating(orders))
        let before = try harness.snapshot()

        // Another group created first, the existing name again, and progress of the existing group.
        var changes = Fixture.creating(
            try Fixture.record("billing"), try Fixture.record("orders", categories: ["post"], checkpoint: 99))
        changes.groups[orders.name] = Fixture.progress([.done(7), Fixture.failed(8)], checkpoint: 6)
        #expect(throws: GroupStoreError.groupExists(orders.name)) { try harness.store.commit(changes) }
        #expect(try harness.snapshot() == before)

        // The same name twice in one commit.
        let twice = Fixture.creating(try Fixture.record("twice"), try Fixture.record("twice", categories: ["post"]))
        #expect(throws: GroupStoreError.groupExists(try GroupName("twice"))) { try harness.store.commit(twice) }
        #expect(try harness.snapshot() == before)

        // The store still takes commits afterwards.
        try harness.store.commit(Fixture.creating(try Fixture.record("billing")))
        #expect(try harness.store.groups().map(\.name.rawValue) == ["billing", "orders"])
    }

    @Test(arguments: GroupStoreKind.allCases)
    func anEmptyCommitChangesNothing(kind: GroupStoreKind) throws {
        let harness = try GroupStoreHarness(kind)
        let orders = try Fixture.record("orders")
        try harness.store.commit(Fixture.creating(orders))
        let before = try harness.snapshot()
        try harness.store.commit(GroupChanges())
        var idle = GroupChanges()
        idle.groups[orders.name] = GroupChanges.Progress()
        try harness.store.commit(idle)
        #expect(try harness.snapshot() == before)
    }

    // MARK: Outcomes

    @Test(arguments: GroupStoreKind.allCases)
    func outcomesAreReadBackInPositionOrderExactly(kind: GroupStoreKind) throws {
        let harness = try GroupStoreHarness(kind)
        let orders = try Fixture.record("orders")
        try harness.store.commit(Fixture.creating(orders))
        let outcomes: [EventOutcome] = [
            .done(12),
            Fixture.failed(3, attempts: 1, lastFailure: "NULL"),
            .done(7),
            Fixture.failed(5, attempts: 5, parked: true, lastFailure: "quotes \" \\ {,} é ✓"),
            Fixture.failed(20, attempts: 0, lastFailure: nil),
        ]
        var changes = GroupChanges()
        changes.groups[orders.name] = Fixture.progress(outcomes)
        try harness.store.commit(changes)
        let store = harness.store
        let sorted = outcomes.sorted { $0.position < $1.position }

        #expect(try store.outcomes(of: orders.name, after: 0, limit: 100) == sorted)
        #expect(try store.outcomes(of: orders.name, after: 5, limit: 100) == Array(sorted[2...]))
        #expect(try store.outcomes(of: orders.name, after: 4, limit: 2) == Array(sorted[1...2]))
        #expect(try store.outcomes(of: orders.name, after: 20, limit: 100).isEmpty)
        #expect(try store.outcomes(of: orders.name, after: 0, limit: 0).isEmpty)
        #expect(try store.outcomes(of: try GroupName("unknown"), after: 0, limit: 100).isEmpty)
        #expect(
            try store.outcomes(of: orders.name, after: 0, limit: 100).map(\.isDone) == [
                false, false, true, true, false,
            ])
    }

    @Test(arguments: GroupStoreKind.allCases)
    func aLaterOutcomeReplacesAnEarlierOneOfItsPosition(kind: GroupStoreKind) throws {
        let harness = try GroupStoreHarness(kind)
        let orders = try Fixture.record("orders")
        var changes = Fixture.creating(orders)
        changes.groups[orders.name] = Fixture.progress([
            Fixture.failed(1, attempts: 1, lastFailure: "nacked"), Fixture.failed(2, attempts: 3, parked: true),
        ])
        try harness.store.commit(changes)

        var update = GroupChanges()
        update.groups[orders.name] = Fixture.progress([
            Fixture.failed(1, attempts: 2, lastFailure: "expired"), .done(2),
        ])
        try harness.store.commit(update)
        #expect(
            try harness.store.outcomes(of: orders.name, after: 0, limit: 10) == [
                Fixture.failed(1, attempts: 2, lastFailure: "expired"), .done(2),
            ])
        // A retried event: no failed attempts, not parked, its last failure kept.
        var retry = GroupChanges()
        retry.groups[orders.name] = Fixture.progress([Fixture.failed(1, attempts: 0, lastFailure: "expired")])
        try harness.store.commit(retry)
        #expect(
            try harness.store.outcomes(of: orders.name, after: 0, limit: 1) == [
                Fixture.failed(1, attempts: 0, lastFailure: "expired")
            ])
    }

    @Test(arguments: GroupStoreKind.allCases)
    func aCheckpointForgetsTheOutcomesAtOrBeforeIt(kind: GroupStoreKind) throws {
        let harness = try GroupStoreHarness(kind)
        let orders = try Fixture.record("orders", checkpoint: 10)
        var changes = Fixture.creating(orders)
        changes.groups[orders.name] = Fixture.progress([.done(11), .done(12), Fixture.failed(13), .done(15)])
        try harness.store.commit(changes)
        #expect(try harness.store.groups().first?.checkpoint == 10)

        // Outcomes and a checkpoint in one commit: the outcomes first, then the checkpoint.
        var acked = GroupChanges()
        acked.groups[orders.name] = Fixture.progress([.done(13), .done(14), Fixture.failed(16)], checkpoint: 14)
        try harness.store.commit(acked)
        #expect(try harness.store.groups().first?.checkpoint == 14)
        #expect(
            try harness.store.outcomes(of: orders.name, after: 0, limit: 10) == [.done(15), Fixture.failed(16)])

        var moved = GroupChanges()
        moved.groups[orders.name] = Fixture.progress(checkpoint: 30)
        try harness.store.commit(moved)
        #expect(try harness.store.groups().first?.checkpoint == 30)
        #expect(try harness.store.outcomes(of: orders.name, after: 0, limit: 10).isEmpty)
        // A checkpoint that does not move changes nothing.
        var same = GroupChanges()
        same.groups[orders.name] = Fixture.progress([.done(31)], checkpoint: 30)
        try harness.store.commit(same)
        #expect(try harness.store.outcomes(of: orders.name, after: 0, limit: 10) == [.done(31)])
    }

    @Test(arguments: GroupStoreKind.allCases)
    func aLargeCommitIsReadBackInPages(kind: GroupStoreKind) throws {
        let harness = try GroupStoreHarness(kind)
        let orders = try Fixture.record("orders")
        var generator = SeededGenerator(seed: 7)
        let outcomes = (1...5_000).map { position -> EventOutcome in
            Bool.random(using: &generator)
                ? .done(Int64(position))
                : Fixture.failed(
                    Int64(position), attempts: Int.random(in: 0...9, using: &generator),
                    parked: Bool.random(using: &generator),
                    lastFailure: Bool.random(using: &generator) ? nil : "failure \(position)")
        }
        var changes = Fixture.creating(orders)
        changes.groups[orders.name] = Fixture.progress(outcomes)
        try harness.store.commit(changes)

        var update = GroupChanges()
        update.groups[orders.name] = Fixture.progress(
            outcomes.filter { $0.position % 3 == 0 }.map { .done($0.position) }, checkpoint: 1_000)
        try harness.store.commit(update)

        var read: [EventOutcome] = []
        while true {
            let page = try harness.store.outcomes(of: orders.name, after: read.last?.position ?? 0, limit: 1_000)
            read += page
            if page.count < 1_000 { break }
        }
        let expected = outcomes.filter { $0.position > 1_000 }.map { $0.position % 3 == 0 ? .done($0.position) : $0 }
        #expect(read == expected)
    }

    // MARK: Groups apart

    @Test(arguments: GroupStoreKind.allCases)
    func twoGroupsNeverShareTheirOutcomes(kind: GroupStoreKind) throws {
        let harness = try GroupStoreHarness(kind)
        let orders = try Fixture.record("orders")
        let billing = try Fixture.record("billing")
        var changes = Fixture.creating(orders, billing)
        changes.groups[orders.name] = Fixture.progress([.done(1), Fixture.failed(2, attempts: 1)])
        changes.groups[billing.name] = Fixture.progress(
            [Fixture.failed(1, attempts: 2), Fixture.failed(2, attempts: 5, parked: true), .done(3)], checkpoint: 0)
        try harness.store.commit(changes)
        #expect(
            try harness.store.outcomes(of: orders.name, after: 0, limit: 10) == [
                .done(1), Fixture.failed(2, attempts: 1),
            ])

        var next = GroupChanges()
        next.groups[orders.name] = Fixture.progress([Fixture.failed(2, attempts: 9, parked: true)], checkpoint: 1)
        try harness.store.commit(next)
        #expect(
            try harness.store.outcomes(of: orders.name, after: 0, limit: 10) == [
                Fixture.failed(2, attempts: 9, parked: true)
            ])
        #expect(
            try harness.store.outcomes(of: billing.name, after: 0, limit: 10) == [
                Fixture.failed(1, attempts: 2), Fixture.failed(2, attempts: 5, parked: true), .done(3),
            ])
        #expect(try harness.store.groups().map(\.checkpoint) == [0, 1])
    }

    @Test(arguments: GroupStoreKind.allCases)
    func aDeletedGroupTakesItsOutcomesWithIt(kind: GroupStoreKind) throws {
        let harness = try GroupStoreHarness(kind)
        let orders = try Fixture.record("orders", checkpoint: 4)
        let billing = try Fixture.record("billing")
        var changes = Fixture.creating(orders, billing)
        changes.groups[orders.name] = Fixture.progress([.done(5), Fixture.failed(8, parked: true)])
        changes.groups[billing.name] = Fixture.progress([.done(5)])
        try harness.store.commit(changes)

        var deletion = GroupChanges()
        deletion.deleted = [orders.name]
        try harness.store.commit(deletion)
        #expect(try harness.store.groups() == [billing])
        #expect(try harness.store.outcomes(of: orders.name, after: 0, limit: 10).isEmpty)
        #expect(try harness.store.outcomes(of: billing.name, after: 0, limit: 10) == [.done(5)])

        // A new group of the same name starts empty.
        let again = try Fixture.record("orders", categories: ["post"], checkpoint: 100)
        try harness.store.commit(Fixture.creating(again))
        #expect(try harness.store.groups() == [billing, again])
        #expect(try harness.store.outcomes(of: again.name, after: 0, limit: 10).isEmpty)

        // Deleted and created again in one commit: the new one, with its own outcomes only.
        var seeded = GroupChanges()
        seeded.groups[orders.name] = Fixture.progress([.done(150)])
        try harness.store.commit(seeded)
        var replace = Fixture.creating(try Fixture.record("orders", categories: ["user"], checkpoint: 200))
        replace.deleted = [orders.name]
        replace.groups[orders.name] = Fixture.progress([.done(201)])
        try harness.store.commit(replace)
        #expect(try harness.store.groups().last == (try Fixture.record("orders", checkpoint: 200)))
        #expect(try harness.store.outcomes(of: orders.name, after: 0, limit: 10) == [.done(201)])
    }

    // MARK: Refused changes

    @Test(arguments: GroupStoreKind.allCases)
    func aChangeThatPointsToABugIsRefusedWithNothingWritten(kind: GroupStoreKind) throws {
        let harness = try GroupStoreHarness(kind)
        let orders = try Fixture.record("orders", checkpoint: 10)
        var setup = Fixture.creating(orders)
        setup.groups[orders.name] = Fixture.progress([.done(12), Fixture.failed(13)])
        try harness.store.commit(setup)
        let before = try harness.snapshot()
        let unknown = try GroupName("unknown")

        var refused: [(String, GroupChanges)] = []
        func refuse(_ label: String, _ progress: GroupChanges.Progress, of name: GroupName? = nil) throws {
            // Each also creates a group and records an outcome, which must not land either.
            var changes = Fixture.creating(try Fixture.record("billing"))
            changes.groups[orders.name] = Fixture.progress([.done(11)])
            changes.groups[name ?? orders.name, default: GroupChanges.Progress()].outcomes.merge(progress.outcomes) {
                $1
            }
            changes.groups[name ?? orders.name]?.checkpoint = progress.checkpoint
            refused.append((label, changes))
        }
        try refuse("progress of an unknown group", Fixture.progress([.done(14)]), of: unknown)
        try refuse("an outcome at the checkpoint", Fixture.progress([.done(10)]))
        try refuse("an outcome before the checkpoint", Fixture.progress([Fixture.failed(3)]))
        try refuse("a checkpoint moved back", Fixture.progress(checkpoint: 9))
        var deleteUnknown = Fixture.creating(try Fixture.record("billing"))
        deleteUnknown.deleted = [unknown]
        refused.append(("a deletion of an unknown group", deleteUnknown))
        refused.append(
            ("a category holding a comma", Fixture.creating(try Fixture.record("billing", categories: ["a,b"]))))

        for (label, changes) in refused {
            let error = try #require(throws: GroupStoreError.self, "\(label)") { try harness.store.commit(changes) }
            guard case .failed = error else {
                Issue.record("\(label): expected .failed, got \(error)")
                continue
            }
            #expect(try harness.snapshot() == before, "\(label)")
        }
    }

    // MARK: Durability

    @Test(arguments: GroupStoreKind.allCases)
    func everythingCommittedIsReadBackAfterReopening(kind: GroupStoreKind) throws {
        let harness = try GroupStoreHarness(kind)
        let orders = try Fixture.record("orders", categories: ["user", "order"], checkpoint: 2)
        let billing = try Fixture.record(
            "billing", settings: GroupSettings(checked: 100, maxDeliver: 1_000, maxInFlight: 10_000))
        var changes = Fixture.creating(orders, billing)
        changes.groups[orders.name] = Fixture.progress([.done(3), Fixture.failed(4, attempts: 2), .done(6)])
        try harness.store.commit(changes)
        var more = GroupChanges()
        more.groups[orders.name] = Fixture.progress(
            [Fixture.failed(4, attempts: 5, parked: true, lastFailure: "gone")], checkpoint: 3)
        more.groups[billing.name] = Fixture.progress([.done(2)])
        try harness.store.commit(more)
        let before = try harness.snapshot()
        #expect(before.records.count == 2)
        #expect(before.outcomes[orders.name]?.map(\.position) == [4, 6])

        try harness.reopen()
        #expect(try harness.snapshot() == before)
        // And the reopened store goes on from there.
        var after = GroupChanges()
        after.groups[orders.name] = Fixture.progress([.done(4)], checkpoint: 6)
        try harness.store.commit(after)
        try harness.reopen()
        #expect(try harness.store.outcomes(of: orders.name, after: 0, limit: 10).isEmpty)
        #expect(try harness.store.groups().map(\.checkpoint) == [0, 6])
    }
}

/// Values the contract tests build their changes from.
enum Fixture {
    static func record(
        _ name: String, categories: [String] = ["user"], settings: GroupSettings = .defaults,
        createdAt: Int64 = 1_700_000_000_000, checkpoint: Int64 = 0
    ) throws -> GroupRecord {
        GroupRecord(
            name: try GroupName(name), categories: categories, settings: settings, createdAt: createdAt,
            checkpoint: checkpoint)
    }

    static func failed(_ position: Int64, attempts: Int = 1, parked: Bool = false, lastFailure: String? = "nacked")
        -> EventOutcome
    {
        .failed(position, attempts: attempts, parked: parked, lastFailure: lastFailure)
    }

    static func creating(_ records: GroupRecord...) -> GroupChanges {
        var changes = GroupChanges()
        changes.created = records
        return changes
    }

    static func progress(_ outcomes: [EventOutcome] = [], checkpoint: Int64? = nil) -> GroupChanges.Progress {
        var progress = GroupChanges.Progress()
        progress.outcomes = Dictionary(outcomes.map { ($0.position, $0) }) { _, last in last }
        progress.checkpoint = checkpoint
        return progress
    }
}
