import LogbookApplication
import LogbookTestSupport
import Testing

/// The promises of `GroupStore`, on every store (`GroupStoreKind`): what a commit writes is
/// read back exactly, a commit is all or nothing, groups never share pending events, and
/// (for the stores with a file or a database) everything survives reopening.
@Suite struct GroupStoreContractTests {
    // MARK: Groups

    @Test(arguments: GroupStoreKind.allCases)
    func createdGroupsAreReadBackByName(kind: GroupStoreKind) throws {
        let harness = try GroupStoreHarness(kind)
        #expect(try harness.store.groups().isEmpty)
        let settings = GroupSettings(checked: 1_500, maxDeliver: 7, maxInFlight: 3)
        let orders = try Fixture.record(
            "orders", categories: ["user", "order", "product"], settings: settings, createdAt: 1_700_000_000_123,
            checkpoint: 41, scanned: 57)
        let audit = try Fixture.record("Audit.log-2", categories: ["post"], checkpoint: 0, scanned: 0)
        try harness.store.commit(Fixture.creating(orders, audit))

        let records = try harness.store.groups()
        #expect(records.map(\.name.rawValue) == ["Audit.log-2", "orders"])
        let stored = try #require(records.last)
        #expect(stored == orders)
        #expect(stored.categories == ["order", "product", "user"])
        #expect(stored.settings == settings)
        #expect(stored.createdAt == 1_700_000_000_123)
        #expect(stored.checkpoint == 41)
        #expect(stored.scanned == 57)
        #expect(records.first == audit)
        #expect(try harness.store.pending(of: orders.name, stream: nil, after: 0, limit: 10).isEmpty)
        #expect(try harness.store.parkedCount(of: orders.name) == 0)
    }

    @Test(arguments: GroupStoreKind.allCases)
    func creatingAnExistingNameWritesNothingOfItsCommit(kind: GroupStoreKind) throws {
        let harness = try GroupStoreHarness(kind)
        let orders = try Fixture.record("orders", checkpoint: 5, scanned: 5)
        try harness.store.commit(Fixture.creating(orders))
        let before = try harness.snapshot()

        // Another group created first, the existing name again, and progress of the existing group.
        var changes = Fixture.creating(
            try Fixture.record("billing"), try Fixture.record("orders", categories: ["post"], checkpoint: 99))
        changes.groups[orders.name] = Fixture.progress(
            inserted: [Fixture.event(6), Fixture.event(7)], checkpoint: 6, scanned: 9)
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

    // MARK: Pending events

    @Test(arguments: GroupStoreKind.allCases)
    func pendingEventsAreReadBackInPositionOrderByteForByte(kind: GroupStoreKind) throws {
        let harness = try GroupStoreHarness(kind)
        let orders = try Fixture.record("orders")
        try harness.store.commit(Fixture.creating(orders))
        let events = [
            Fixture.event(12, stream: "user-2", payload: [0xFF, 0x00, 0xC3, 0x28, 0x80, 0xFE, 0x5C, 0x22, 0x7B]),
            Fixture.event(3, stream: "user-1", payload: []),
            Fixture.event(7, stream: "user-2", attempts: 2, lastFailure: "NULL", payload: Array("{\"a\":1}".utf8)),
            Fixture.event(5, stream: "user-1", attempts: 5, parked: true, lastFailure: "quotes \" \\ {,} é ✓"),
            Fixture.event(20, stream: "user-1", payload: (0...255).map { UInt8($0) }),
        ]
        var changes = GroupChanges()
        changes.groups[orders.name] = Fixture.progress(inserted: events)
        try harness.store.commit(changes)
        let store = harness.store
        let sorted = events.sorted { $0.position < $1.position }

        #expect(try store.pending(of: orders.name, stream: nil, after: 0, limit: 100) == sorted)
        #expect(try store.pending(of: orders.name, stream: nil, after: 5, limit: 100) == Array(sorted[2...]))
        #expect(try store.pending(of: orders.name, stream: nil, after: 4, limit: 2) == Array(sorted[1...2]))
        #expect(try store.pending(of: orders.name, stream: nil, after: 20, limit: 100).isEmpty)
        #expect(try store.pending(of: orders.name, stream: nil, after: 0, limit: 0).isEmpty)
        #expect(
            try store.pending(of: orders.name, stream: "user-1", after: 0, limit: 100).map(\.position) == [3, 5, 20])
        #expect(try store.pending(of: orders.name, stream: "user-1", after: 3, limit: 1).map(\.position) == [5])
        #expect(try store.pending(of: orders.name, stream: "user-2", after: 7, limit: 100).map(\.position) == [12])
        #expect(try store.pending(of: orders.name, stream: "user-3", after: 0, limit: 100).isEmpty)
        #expect(try store.pending(of: try GroupName("unknown"), stream: nil, after: 0, limit: 100).isEmpty)
        #expect(try store.parkedCount(of: orders.name) == 1)
        #expect(try store.parkedCount(of: try GroupName("unknown")) == 0)
    }

    @Test(arguments: GroupStoreKind.allCases)
    func anUpdateChangesAttemptsParkingAndFailureAndKeepsThePayload(kind: GroupStoreKind) throws {
        let harness = try GroupStoreHarness(kind)
        let orders = try Fixture.record("orders")
        let first = Fixture.event(1, stream: "user-1", payload: [0xFE, 0xED])
        let second = Fixture.event(2, stream: "user-2", attempts: 3, parked: true, lastFailure: "expired")
        var changes = Fixture.creating(orders)
        changes.groups[orders.name] = Fixture.progress(inserted: [first, second])
        try harness.store.commit(changes)
        #expect(try harness.store.parkedCount(of: orders.name) == 1)

        // The values handed in carry another payload and stream: neither is written.
        var update = GroupChanges()
        update.groups[orders.name] = Fixture.progress(updated: [
            PendingEvent(
                position: 1, stream: "other-9", attempts: 4, parked: true, lastFailure: "nacked", payload: [1]),
            PendingEvent(position: 2, stream: "other-9", attempts: 0, parked: false, lastFailure: nil, payload: []),
        ])
        try harness.store.commit(update)
        #expect(
            try harness.store.pending(of: orders.name, stream: nil, after: 0, limit: 10) == [
                PendingEvent(
                    position: 1, stream: "user-1", attempts: 4, parked: true, lastFailure: "nacked",
                    payload: [0xFE, 0xED]),
                PendingEvent(
                    position: 2, stream: "user-2", attempts: 0, parked: false, lastFailure: nil,
                    payload: second.payload),
            ])
        #expect(try harness.store.parkedCount(of: orders.name) == 1)
        #expect(try harness.store.pending(of: orders.name, stream: "user-1", after: 0, limit: 10).count == 1)
    }

    @Test(arguments: GroupStoreKind.allCases)
    func removalsCheckpointAndScannedAreApplied(kind: GroupStoreKind) throws {
        let harness = try GroupStoreHarness(kind)
        let orders = try Fixture.record("orders", checkpoint: 10, scanned: 10)
        var changes = Fixture.creating(orders)
        changes.groups[orders.name] = Fixture.progress(
            inserted: (11...15).map { Fixture.event($0) }, scanned: 18)
        try harness.store.commit(changes)
        #expect(try harness.store.groups().first?.scanned == 18)
        #expect(try harness.store.groups().first?.checkpoint == 10)

        var acked = GroupChanges()
        acked.groups[orders.name] = Fixture.progress(removed: [11, 12, 14], checkpoint: 12)
        try harness.store.commit(acked)
        let record = try #require(try harness.store.groups().first)
        #expect(record.checkpoint == 12)
        #expect(record.scanned == 18)
        #expect(
            try harness.store.pending(of: orders.name, stream: nil, after: 0, limit: 10).map(\.position) == [13, 15])

        var scanned = GroupChanges()
        scanned.groups[orders.name] = Fixture.progress(scanned: 30)
        try harness.store.commit(scanned)
        #expect(try harness.store.groups().first.map { [$0.checkpoint, $0.scanned] } == [12, 30])
    }

    @Test(arguments: GroupStoreKind.allCases)
    func oneCommitInsertsThenUpdatesThenRemoves(kind: GroupStoreKind) throws {
        let harness = try GroupStoreHarness(kind)
        let orders = try Fixture.record("orders")
        var changes = Fixture.creating(orders)
        changes.groups[orders.name] = Fixture.progress(
            inserted: [Fixture.event(1), Fixture.event(2), Fixture.event(3, stream: "user-2")],
            updated: [Fixture.event(2, attempts: 1), Fixture.event(1, attempts: 1)], removed: [1], checkpoint: 1,
            scanned: 3)
        try harness.store.commit(changes)
        #expect(
            try harness.store.pending(of: orders.name, stream: nil, after: 0, limit: 10) == [
                Fixture.event(2, attempts: 1), Fixture.event(3, stream: "user-2"),
            ])
        #expect(try harness.store.groups() == [try Fixture.record("orders", checkpoint: 1, scanned: 3)])
    }

    @Test(arguments: GroupStoreKind.allCases)
    func aLargeCommitIsReadBackInPages(kind: GroupStoreKind) throws {
        let harness = try GroupStoreHarness(kind)
        let orders = try Fixture.record("orders")
        var generator = SeededGenerator(seed: 7)
        let events = (1...5_000).map { position in
            Fixture.event(
                Int64(position), stream: "user-\(position % 37)",
                payload: (0..<Int.random(in: 0...64, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                })
        }
        var changes = Fixture.creating(orders)
        changes.groups[orders.name] = Fixture.progress(inserted: events, scanned: 5_000)
        try harness.store.commit(changes)

        var update = GroupChanges()
        update.groups[orders.name] = Fixture.progress(
            updated: events.filter { $0.position % 2 == 0 }.map {
                PendingEvent(position: $0.position, stream: $0.stream, attempts: 1, payload: [])
            }, removed: events.filter { $0.position % 3 == 0 }.map(\.position))
        try harness.store.commit(update)

        var read: [PendingEvent] = []
        while true {
            let page = try harness.store.pending(
                of: orders.name, stream: nil, after: read.last?.position ?? 0, limit: 1_000)
            read += page
            if page.count < 1_000 { break }
        }
        let expected = events.filter { $0.position % 3 != 0 }.map { event in
            var event = event
            if event.position % 2 == 0 { event.attempts = 1 }
            return event
        }
        #expect(read == expected)
        #expect(
            try harness.store.pending(of: orders.name, stream: "user-5", after: 0, limit: 10_000).map(\.position)
                == expected.filter { $0.stream == "user-5" }.map(\.position))
    }

    // MARK: Groups apart

    @Test(arguments: GroupStoreKind.allCases)
    func twoGroupsNeverShareTheirPendingEvents(kind: GroupStoreKind) throws {
        let harness = try GroupStoreHarness(kind)
        let orders = try Fixture.record("orders")
        let billing = try Fixture.record("billing")
        var changes = Fixture.creating(orders, billing)
        changes.groups[orders.name] = Fixture.progress(
            inserted: [Fixture.event(1, payload: [1]), Fixture.event(2, payload: [2])])
        changes.groups[billing.name] = Fixture.progress(
            inserted: [
                Fixture.event(1, payload: [101]), Fixture.event(2, parked: true, payload: [102]),
                Fixture.event(3, payload: [103]),
            ], checkpoint: 0, scanned: 3)
        try harness.store.commit(changes)
        #expect(
            try harness.store.pending(of: orders.name, stream: nil, after: 0, limit: 10).map(\.payload) == [[1], [2]])
        #expect(
            try harness.store.pending(of: billing.name, stream: nil, after: 0, limit: 10).map(\.payload) == [
                [101], [102], [103],
            ])
        #expect(try harness.store.parkedCount(of: orders.name) == 0)
        #expect(try harness.store.parkedCount(of: billing.name) == 1)

        var next = GroupChanges()
        next.groups[orders.name] = Fixture.progress(
            updated: [Fixture.event(2, attempts: 9, parked: true)], removed: [1], checkpoint: 1)
        try harness.store.commit(next)
        #expect(try harness.store.pending(of: orders.name, stream: nil, after: 0, limit: 10).map(\.position) == [2])
        #expect(
            try harness.store.pending(of: billing.name, stream: nil, after: 0, limit: 10) == [
                Fixture.event(1, payload: [101]), Fixture.event(2, parked: true, payload: [102]),
                Fixture.event(3, payload: [103]),
            ])
        #expect(try harness.store.parkedCount(of: orders.name) == 1)
        #expect(try harness.store.groups().map(\.checkpoint) == [0, 1])
        #expect(try harness.store.groups().map(\.scanned) == [3, 0])
    }

    @Test(arguments: GroupStoreKind.allCases)
    func aDeletedGroupTakesItsPendingEventsWithIt(kind: GroupStoreKind) throws {
        let harness = try GroupStoreHarness(kind)
        let orders = try Fixture.record("orders", checkpoint: 4, scanned: 9)
        let billing = try Fixture.record("billing")
        var changes = Fixture.creating(orders, billing)
        changes.groups[orders.name] = Fixture.progress(inserted: [Fixture.event(5), Fixture.event(8, parked: true)])
        changes.groups[billing.name] = Fixture.progress(inserted: [Fixture.event(5, payload: [9])])
        try harness.store.commit(changes)

        var deletion = GroupChanges()
        deletion.deleted = [orders.name]
        try harness.store.commit(deletion)
        #expect(try harness.store.groups() == [billing])
        #expect(try harness.store.pending(of: orders.name, stream: nil, after: 0, limit: 10).isEmpty)
        #expect(try harness.store.parkedCount(of: orders.name) == 0)
        #expect(
            try harness.store.pending(of: billing.name, stream: nil, after: 0, limit: 10) == [
                Fixture.event(5, payload: [9])
            ])

        // A new group of the same name starts empty.
        let again = try Fixture.record("orders", categories: ["post"], checkpoint: 100, scanned: 100)
        try harness.store.commit(Fixture.creating(again))
        #expect(try harness.store.groups() == [billing, again])
        #expect(try harness.store.pending(of: again.name, stream: nil, after: 0, limit: 10).isEmpty)

        // Deleted and created again in one commit: the new one, with its own events only.
        var seeded = GroupChanges()
        seeded.groups[orders.name] = Fixture.progress(inserted: [Fixture.event(150)])
        try harness.store.commit(seeded)
        var replace = Fixture.creating(
            try Fixture.record("orders", categories: ["user"], checkpoint: 200, scanned: 201))
        replace.deleted = [orders.name]
        replace.groups[orders.name] = Fixture.progress(inserted: [Fixture.event(201)])
        try harness.store.commit(replace)
        #expect(try harness.store.groups().last == (try Fixture.record("orders", checkpoint: 200, scanned: 201)))
        #expect(try harness.store.pending(of: orders.name, stream: nil, after: 0, limit: 10) == [Fixture.event(201)])
    }

    // MARK: Refused changes

    @Test(arguments: GroupStoreKind.allCases)
    func aChangeThatPointsToABugIsRefusedWithNothingWritten(kind: GroupStoreKind) throws {
        let harness = try GroupStoreHarness(kind)
        let orders = try Fixture.record("orders")
        var setup = Fixture.creating(orders)
        setup.groups[orders.name] = Fixture.progress(inserted: [Fixture.event(1), Fixture.event(2)])
        try harness.store.commit(setup)
        let before = try harness.snapshot()
        let unknown = try GroupName("unknown")

        var refused: [(String, GroupChanges)] = []
        func refuse(_ label: String, _ progress: GroupChanges.Progress, of name: GroupName? = nil) throws {
            // Each also creates a group and moves the checkpoint, which must not land either.
            var changes = Fixture.creating(try Fixture.record("billing"))
            changes.groups[orders.name] = Fixture.progress(checkpoint: 2, scanned: 2)
            changes.groups[name ?? orders.name, default: GroupChanges.Progress()].inserted += progress.inserted
            changes.groups[name ?? orders.name]?.updated.merge(progress.updated) { $1 }
            changes.groups[name ?? orders.name]?.removed += progress.removed
            refused.append((label, changes))
        }
        try refuse("progress of an unknown group", Fixture.progress(inserted: [Fixture.event(3)]), of: unknown)
        try refuse("an insert of a pending position", Fixture.progress(inserted: [Fixture.event(3), Fixture.event(2)]))
        try refuse(
            "the same position inserted twice", Fixture.progress(inserted: [Fixture.event(4), Fixture.event(4)]))
        try refuse("an update of a position not pending", Fixture.progress(updated: [Fixture.event(9, attempts: 1)]))
        try refuse("a removal of a position not pending", Fixture.progress(removed: [1, 9]))
        try refuse("a removal of one position twice", Fixture.progress(removed: [1, 1]))
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
        let orders = try Fixture.record("orders", categories: ["user", "order"], checkpoint: 2, scanned: 2)
        let billing = try Fixture.record(
            "billing", settings: GroupSettings(checked: 100, maxDeliver: 1_000, maxInFlight: 10_000))
        var changes = Fixture.creating(orders, billing)
        changes.groups[orders.name] = Fixture.progress(
            inserted: [
                Fixture.event(3, payload: [0x00, 0xFF, 0x80]), Fixture.event(4, stream: "order-7"),
                Fixture.event(6, stream: "user-2"),
            ], scanned: 6)
        try harness.store.commit(changes)
        var more = GroupChanges()
        more.groups[orders.name] = Fixture.progress(
            updated: [Fixture.event(4, stream: "order-7", attempts: 5, parked: true, lastFailure: "gone")],
            removed: [3], checkpoint: 3)
        more.groups[billing.name] = Fixture.progress(inserted: [Fixture.event(1, payload: [7, 7])], scanned: 1)
        try harness.store.commit(more)
        let before = try harness.snapshot()
        #expect(before.records.count == 2)
        #expect(before.pending[orders.name]?.map(\.position) == [4, 6])
        #expect(before.parked[orders.name] == 1)

        try harness.reopen()
        #expect(try harness.snapshot() == before)
        // And the reopened store goes on from there.
        var after = GroupChanges()
        after.groups[orders.name] = Fixture.progress(removed: [4, 6], checkpoint: 6)
        try harness.store.commit(after)
        try harness.reopen()
        #expect(try harness.store.pending(of: orders.name, stream: nil, after: 0, limit: 10).isEmpty)
        #expect(try harness.store.groups().map(\.checkpoint) == [0, 6])
    }
}

/// Values the contract tests build their changes from.
enum Fixture {
    static func record(
        _ name: String, categories: [String] = ["user"], settings: GroupSettings = .defaults,
        createdAt: Int64 = 1_700_000_000_000, checkpoint: Int64 = 0, scanned: Int64 = 0
    ) throws -> GroupRecord {
        GroupRecord(
            name: try GroupName(name), categories: categories, settings: settings, createdAt: createdAt,
            checkpoint: checkpoint, scanned: scanned)
    }

    static func event(
        _ position: Int64, stream: String = "user-1", attempts: Int = 0, parked: Bool = false,
        lastFailure: String? = nil, payload: [UInt8]? = nil
    ) -> PendingEvent {
        PendingEvent(
            position: position, stream: stream, attempts: attempts, parked: parked, lastFailure: lastFailure,
            payload: payload ?? Array("{\"position\":\(position)}".utf8))
    }

    static func creating(_ records: GroupRecord...) -> GroupChanges {
        var changes = GroupChanges()
        changes.created = records
        return changes
    }

    static func progress(
        inserted: [PendingEvent] = [], updated: [PendingEvent] = [], removed: [Int64] = [], checkpoint: Int64? = nil,
        scanned: Int64? = nil
    ) -> GroupChanges.Progress {
        var progress = GroupChanges.Progress()
        progress.inserted = inserted
        progress.updated = Dictionary(updated.map { ($0.position, $0) }) { _, last in last }
        progress.removed = removed
        progress.checkpoint = checkpoint
        progress.scanned = scanned
        return progress
    }
}
