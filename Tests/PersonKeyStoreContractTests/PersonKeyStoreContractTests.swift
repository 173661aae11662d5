import Foundation
import LogbookApplication
import LogbookTestSupport
import Testing

/// The promises of `PersonKeyStore`, on every store (`PersonKeyStoreKind`): a created key is
/// read back byte for byte and never replaced, a destroyed key stays destroyed, forgetting
/// marks last until the destroy, the master-key check is written once, destroys are
/// journalled under gapless marks that every store on the same file or database reads, and
/// (for the stores with a file or a database) everything survives reopening.
@Suite struct PersonKeyStoreContractTests {
    @Test(arguments: PersonKeyStoreKind.allCases)
    func aNewStoreKnowsNobody(kind: PersonKeyStoreKind) throws {
        let harness = try PersonKeyStoreHarness(kind)
        #expect(try harness.store.keys(for: ["u-1", "u-2", ""]).isEmpty)
        #expect(try harness.store.keys(for: []).isEmpty)
        #expect(try harness.store.create([:]).isEmpty)
        #expect(try harness.store.forgettingUsers().isEmpty)
        #expect(try harness.store.masterKeyCheck() == nil)
        #expect(try harness.store.destroyedSince(0) == DestroyedKeys(userIds: [], mark: 0))
        #expect(try harness.store.latestDestroyMark() == 0)
    }

    @Test(arguments: PersonKeyStoreKind.allCases)
    func createdKeysAreReadBackByteForByte(kind: PersonKeyStoreKind) throws {
        let harness = try PersonKeyStoreHarness(kind)
        let keys: [String: [UInt8]] = [
            "u-1": [0x00, 0xFF, 0x00, 0x5C, 0x27, 0x22, 0x7B],
            "u-2": (0...255).map { UInt8($0) },
            "u-3": [],
            "quotes \" \\ {,} é ✓": [0x00],
            "long-\(String(repeating: "x", count: 300))": Array(repeating: 0xAB, count: 5_000),
        ]
        let created = try harness.store.create(keys)
        #expect(created == keys.mapValues { .wrapped($0) })
        #expect(try harness.store.keys(for: Array(keys.keys)) == keys.mapValues { .wrapped($0) })
        // A subset, an unknown id beside known ones, and an id asked for twice.
        #expect(
            try harness.store.keys(for: ["u-2", "u-9", "u-3", "u-2"]) == [
                "u-2": .wrapped((0...255).map { UInt8($0) }), "u-3": .wrapped([]),
            ])
    }

    @Test(arguments: PersonKeyStoreKind.allCases)
    func createNeverReplacesAKey(kind: PersonKeyStoreKind) throws {
        let harness = try PersonKeyStoreHarness(kind)
        #expect(try harness.store.create(["u-1": [1, 1, 1]]) == ["u-1": .wrapped([1, 1, 1])])
        // The second create keeps the first key and answers it; the new user gets theirs.
        #expect(
            try harness.store.create(["u-1": [2, 2, 2], "u-2": [3]]) == [
                "u-1": .wrapped([1, 1, 1]), "u-2": .wrapped([3]),
            ])
        #expect(try harness.store.keys(for: ["u-1", "u-2"]) == ["u-1": .wrapped([1, 1, 1]), "u-2": .wrapped([3])])
    }

    @Test(arguments: PersonKeyStoreKind.allCases)
    func aDestroyedKeyStaysDestroyedForever(kind: PersonKeyStoreKind) throws {
        let harness = try PersonKeyStoreHarness(kind)
        _ = try harness.store.create(["u-1": [1, 2, 3], "u-2": [4, 5, 6]])
        try harness.store.destroy("u-1")
        #expect(try harness.store.keys(for: ["u-1", "u-2"]) == ["u-1": .destroyed, "u-2": .wrapped([4, 5, 6])])
        // Creating it again changes nothing: the user stays forgotten.
        #expect(
            try harness.store.create(["u-1": [7, 8, 9], "u-3": [1]]) == ["u-1": .destroyed, "u-3": .wrapped([1])])
        #expect(try harness.store.keys(for: ["u-1"]) == ["u-1": .destroyed])
        // Destroying it again is no failure.
        try harness.store.destroy("u-1")
        #expect(
            try harness.store.keys(for: ["u-1", "u-2", "u-3"]) == [
                "u-1": .destroyed, "u-2": .wrapped([4, 5, 6]), "u-3": .wrapped([1]),
            ])
    }

    @Test(arguments: PersonKeyStoreKind.allCases)
    func destroyingAnUnknownUserRecordsThemAsDestroyed(kind: PersonKeyStoreKind) throws {
        let harness = try PersonKeyStoreHarness(kind)
        try harness.store.destroy("never-seen")
        #expect(try harness.store.keys(for: ["never-seen"]) == ["never-seen": .destroyed])
        #expect(try harness.store.create(["never-seen": [1]]) == ["never-seen": .destroyed])
    }

    @Test(arguments: PersonKeyStoreKind.allCases)
    func aForgettingMarkLastsUntilTheDestroy(kind: PersonKeyStoreKind) throws {
        let harness = try PersonKeyStoreHarness(kind)
        _ = try harness.store.create(["u-b": [1], "u-a": [2]])
        try harness.store.beginForgetting("u-b")
        try harness.store.beginForgetting("u-a")
        try harness.store.beginForgetting("u-b")
        try harness.store.beginForgetting("no-key")
        #expect(try harness.store.forgettingUsers() == ["no-key", "u-a", "u-b"])
        // The mark does not touch the key: only the destroy does, and it ends the mark.
        #expect(try harness.store.keys(for: ["u-a", "u-b"]) == ["u-a": .wrapped([2]), "u-b": .wrapped([1])])
        try harness.store.destroy("u-b")
        #expect(try harness.store.forgettingUsers() == ["no-key", "u-a"])
        try harness.store.destroy("no-key")
        #expect(try harness.store.forgettingUsers() == ["u-a"])
        #expect(
            try harness.store.keys(for: ["u-a", "u-b", "no-key"]) == [
                "u-a": .wrapped([2]), "u-b": .destroyed, "no-key": .destroyed,
            ])
        // Destroying a user who is not being forgotten leaves the other marks alone.
        try harness.store.destroy("u-z")
        #expect(try harness.store.forgettingUsers() == ["u-a"])
    }

    @Test(arguments: PersonKeyStoreKind.allCases)
    func theForgettingUsersAreSortedByTheirBytes(kind: PersonKeyStoreKind) throws {
        let harness = try PersonKeyStoreHarness(kind)
        let users = ["é", "Z", "a", "e", "ß", "A", "10", "9"]
        for user in users { try harness.store.beginForgetting(user) }
        #expect(try harness.store.forgettingUsers() == users.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
    }

    @Test(arguments: PersonKeyStoreKind.allCases)
    func theMasterKeyCheckIsWrittenOnce(kind: PersonKeyStoreKind) throws {
        let harness = try PersonKeyStoreHarness(kind)
        let first: [UInt8] = [0x00, 0x01, 0xFE, 0xFF, 0x5C]
        #expect(try harness.store.setMasterKeyCheck(first) == first)
        #expect(try harness.store.masterKeyCheck() == first)
        // A second writer gets the first check back, and nothing changes.
        #expect(try harness.store.setMasterKeyCheck([9, 9, 9]) == first)
        #expect(try harness.store.masterKeyCheck() == first)
    }

    @Test(arguments: PersonKeyStoreKind.allCases)
    func everythingSurvivesReopening(kind: PersonKeyStoreKind) throws {
        let harness = try PersonKeyStoreHarness(kind)
        _ = try harness.store.create(["u-1": [1, 2], "u-2": [3, 4], "u-3": []])
        try harness.store.beginForgetting("u-2")
        try harness.store.beginForgetting("u-3")
        try harness.store.destroy("u-3")
        try harness.store.destroy("u-4")
        _ = try harness.store.setMasterKeyCheck([0xC0, 0xFF, 0xEE])
        try harness.reopen()
        let expected: [String: StoredPersonKey] = [
            "u-1": .wrapped([1, 2]), "u-2": .wrapped([3, 4]), "u-3": .destroyed, "u-4": .destroyed,
        ]
        #expect(try harness.store.keys(for: ["u-1", "u-2", "u-3", "u-4", "u-5"]) == expected)
        #expect(try harness.store.forgettingUsers() == ["u-2"])
        #expect(try harness.store.masterKeyCheck() == [0xC0, 0xFF, 0xEE])
        #expect(try harness.store.create(["u-1": [0], "u-3": [0]]) == ["u-1": .wrapped([1, 2]), "u-3": .destroyed])
        #expect(try harness.store.setMasterKeyCheck([1]) == [0xC0, 0xFF, 0xEE])
        #expect(try harness.store.destroyedSince(0) == DestroyedKeys(userIds: ["u-3", "u-4"], mark: 2))
        try harness.store.destroy("u-1")
        #expect(try harness.store.destroyedSince(2) == DestroyedKeys(userIds: ["u-1"], mark: 3))
    }

    @Test(arguments: PersonKeyStoreKind.allCases)
    func aThousandKeysAreCreatedInOneCall(kind: PersonKeyStoreKind) throws {
        let harness = try PersonKeyStoreHarness(kind)
        var canaries = Canaries(seed: 11)
        let early = canaries.keys(10)
        _ = try harness.store.create(early)
        var batch = canaries.keys(990)
        // Ten ids that have keys already, with other bytes: they keep theirs.
        for userId in early.keys { batch[userId] = canaries.key() }
        #expect(batch.count == 1_000)
        let created = try harness.store.create(batch)
        var expected = batch.mapValues { StoredPersonKey.wrapped($0) }
        for (userId, key) in early { expected[userId] = .wrapped(key) }
        #expect(created == expected)
        #expect(try harness.store.keys(for: Array(batch.keys)) == expected)
        try harness.reopen()
        #expect(try harness.store.keys(for: Array(batch.keys)) == expected)
    }

    // MARK: The destroy journal

    @Test(arguments: PersonKeyStoreKind.allCases)
    func eachDestroyGetsTheNextMark(kind: PersonKeyStoreKind) throws {
        let harness = try PersonKeyStoreHarness(kind)
        let store = harness.store
        _ = try store.create(["u-1": [1], "u-2": [2], "u-3": [3]])
        #expect(try store.destroyedSince(0) == DestroyedKeys(userIds: [], mark: 0))
        try store.destroy("u-2")
        #expect(try store.destroyedSince(0) == DestroyedKeys(userIds: ["u-2"], mark: 1))
        // A user never seen is destroyed too; a user destroyed already adds nothing.
        try store.destroy("never-seen")
        try store.destroy("u-2")
        try store.destroy("never-seen")
        try store.destroy("u-1")
        #expect(try store.destroyedSince(0) == DestroyedKeys(userIds: ["u-2", "never-seen", "u-1"], mark: 3))
        #expect(try store.latestDestroyMark() == 3)
        // Creating a key for a destroyed user changes nothing in the journal either.
        #expect(try store.create(["u-2": [9], "u-4": [4]]) == ["u-2": .destroyed, "u-4": .wrapped([4])])
        #expect(try store.latestDestroyMark() == 3)
    }

    @Test(arguments: PersonKeyStoreKind.allCases)
    func destroyedSinceAnswersOnlyWhatIsNewer(kind: PersonKeyStoreKind) throws {
        let harness = try PersonKeyStoreHarness(kind)
        let store = harness.store
        let users = (1...5).map { "u-\($0)" }
        _ = try store.create(Dictionary(uniqueKeysWithValues: users.map { ($0, [UInt8(1)]) }))
        for user in users { try store.destroy(user) }
        for mark in 0...5 {
            #expect(
                try store.destroyedSince(Int64(mark))
                    == DestroyedKeys(userIds: Array(users[mark...]), mark: 5), "since \(mark)")
        }
        // A mark past the last one (another store's, say) answers nobody, and itself.
        #expect(try store.destroyedSince(9) == DestroyedKeys(userIds: [], mark: 9))
        // Read on from each answer's mark: every destroy once, in order.
        var seen: [String] = []
        var mark: Int64 = 5
        for user in ["u-6", "u-7"] {
            try store.destroy(user)
            let answer = try store.destroyedSince(mark)
            seen += answer.userIds
            mark = answer.mark
        }
        #expect(seen == ["u-6", "u-7"])
        #expect(mark == 7)
        #expect(try store.destroyedSince(mark) == DestroyedKeys(userIds: [], mark: 7))
    }

    @Test(arguments: PersonKeyStoreKind.allCases)
    func storesOnTheSameFileOrDatabaseReadEachOthersDestroys(kind: PersonKeyStoreKind) throws {
        let harness = try PersonKeyStoreHarness(kind)
        let first = harness.store
        let second = try harness.anotherStore()
        _ = try first.create(["u-1": [1], "u-2": [2], "u-3": [3]])
        try first.destroy("u-1")
        #expect(try second.destroyedSince(0) == DestroyedKeys(userIds: ["u-1"], mark: 1))
        try second.destroy("u-2")
        try second.destroy("u-1")
        try first.destroy("u-3")
        #expect(try first.destroyedSince(1) == DestroyedKeys(userIds: ["u-2", "u-3"], mark: 3))
        #expect(try second.destroyedSince(0) == DestroyedKeys(userIds: ["u-1", "u-2", "u-3"], mark: 3))
        #expect(try second.latestDestroyMark() == 3)
    }

    /// Stores on one file or database destroying at once, some the same users, while a
    /// reader follows the journal from each answer's mark: the marks are 1…n with no gap,
    /// each user is journalled once, and the reader, which never goes back, misses none
    /// (a mark seen before a smaller one commits would be skipped for good).
    @Test(arguments: PersonKeyStoreKind.allCases)
    func concurrentDestroysGetGaplessMarksInCommitOrder(kind: PersonKeyStoreKind) throws {
        let harness = try PersonKeyStoreHarness(kind)
        let stores = try [harness.store] + (0..<3).map { _ in try harness.anotherStore() }
        let reader = try harness.anotherStore()
        // Each writer destroys users of its own and the shared ones, in another order.
        let shared = (0..<10).map { "shared-\($0)" }
        let plans = stores.indices.map { index in
            (0..<15).map { "w\(index)-\($0)" } + (index % 2 == 0 ? shared : shared.reversed())
        }
        let done = Shared(0)
        let followed = Shared<[String]>([])
        let errors = onThreads(stores.count + 1) { index in
            guard index < stores.count else {
                var mark: Int64 = 0
                var seen: [String] = []
                while true {
                    let finished = done.value == stores.count
                    let answer = try reader.destroyedSince(mark)
                    guard answer.mark == mark + Int64(answer.userIds.count) else {
                        throw JournalGap(description: "from \(mark): \(answer)")
                    }
                    seen += answer.userIds
                    mark = answer.mark
                    if finished { break }
                    usleep(200)
                }
                followed.update { $0 = seen }
                return
            }
            defer { done.update { $0 += 1 } }
            for user in plans[index] { try stores[index].destroy(user) }
        }
        #expect(errors.isEmpty, "\(errors)")
        let all = try harness.store.destroyedSince(0)
        let expected = Set(plans.joined())
        #expect(all.userIds.count == expected.count)
        #expect(Set(all.userIds) == expected)
        #expect(all.mark == Int64(expected.count))
        #expect(followed.value == all.userIds)
    }
}

/// A journal answer whose mark is not the one asked for plus its users.
private struct JournalGap: Error, CustomStringConvertible {
    var description: String
}
