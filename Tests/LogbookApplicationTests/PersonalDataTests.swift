import LogbookApplication
import LogbookCrypto
import LogbookDomain
import LogbookJSON
import LogbookMemory
import LogbookTestSupport
import Testing

/// Personal values sealed per person (`ProtectedEventStore` over a plain store, with a
/// `PersonalDataVault`): what the log beneath holds, what readers get, and what forgetting does.
@Suite("Personal data: sealed in the log, forgotten with its key")
struct PersonalDataTests {
    /// A handler whose log seals personal values, and the plain log beneath it.
    struct Rig {
        let keys = InMemoryPersonKeyStore()
        let master = MasterKey.generate()
        let base = InMemoryEventStore()
        let vault: PersonalDataVault
        let store: ProtectedEventStore
        let harness: HandlerHarness

        init() throws {
            vault = try PersonalDataVault(master: master, keyStore: keys)
            store = ProtectedEventStore(base, vault: vault)
            harness = HandlerHarness(store: store, buckets: vault.buckets)
        }

        /// Every payload of the log beneath, as stored.
        func rawPayloads() throws -> String {
            try base.read(fromPosition: 1, limit: 10_000, categories: nil).map(\.data).joined(separator: "\n")
        }

        func served() throws -> [RecordedEvent] { try store.read(fromPosition: 1, limit: 10_000, categories: nil) }
    }

    static let ann =
        [
            "userId": "u1", "name": "Ann Canary-7a1", "email": "Ann.Canary@Example.com", "gender": "female",
            "birthday": "1990-02-28",
        ] as JSONValue

    @Test("the log holds no personal value in clear; replies, reads and records give them back byte for byte")
    func sealedInTheLogPlainToReaders() throws {
        let rig = try Rig()
        let outcome = rig.harness.send("c1", "RegisterUser", Self.ann)
        let accepted = try #require(outcome.accepted)
        rig.harness.send("c2", "UpdateUserProfile", ["userId": "u1", "name": "Ann Lee-7a1", "gender": "other"])
        let raw = try rig.rawPayloads()
        for value in ["Canary", "canary", "Example.com", "example.com", "female", "1990-02-28", "Lee-7a1", "other"] {
            #expect(!raw.contains(value), "\(value) is in the log in clear")
        }
        #expect(raw.contains(#""subscription":"free""#), "what is not personal stays readable")
        let served = try rig.served()
        #expect(served.map(\.data).prefix(2) == accepted.events.map(\.data)[...], "reads give the reply's bytes")
        #expect(try payload(served[0])["name"] == "Ann Canary-7a1")
        #expect(try payload(served[0])["email"] == "Ann.Canary@Example.com")
        #expect(try payload(served[1])["email"] == "ann.canary@example.com", "the claim carries the address")
        #expect(try rig.store.commandRecord("c1")?.events.map(\.data) == accepted.events.map(\.data))
        #expect(
            try rig.store.readStream("user-u1", fromVersion: 1, limit: 10).map(\.data)
                == served.filter { $0.stream == "user-u1" }.map(\.data))
        let visited = try rig.store.visitedEvents(fromPosition: 1, limit: 100, categories: nil)
        #expect(visited.map(\.data) == served.map(\.data))
        // No stream name carries the address.
        #expect(!served.contains { $0.stream.contains("@") || $0.stream.contains("canary") })
    }

    @Test("a sealed value moved to another field or another event does not open")
    func ciphertextsAreBoundToTheirPlace() throws {
        let rig = try Rig()
        rig.harness.send("c1", "RegisterUser", Self.ann)
        rig.harness.send("c2", "UpdateUserProfile", ["userId": "u1", "name": "Ann Lee"])
        let stored = try rig.base.read(fromPosition: 1, limit: 10, categories: nil)
        let registration = try #require(stored.first)
        let sealedName = try #require(try payload(registration)["name"])
        let sealedEmail = try #require(try payload(registration)["email"])
        // Into another field of the same event.
        var swapped = registration
        var fields = try payload(registration)
        fields["name"] = sealedEmail
        fields["email"] = sealedName
        swapped.data = JSONWriter.string(.object(fields))
        #expect(throws: EventStoreError.self) { try rig.vault.open(swapped) }
        // Into the same field of another event of the same user.
        var update = try #require(stored.first { $0.type == "UserProfileUpdated" })
        var updated = try payload(update)
        updated["name"] = sealedName
        update.data = JSONWriter.string(.object(updated))
        #expect {
            try rig.vault.open(update)
        } throws: { error in
            guard case .unreadableEvent(let position, let reason)? = error as? EventStoreError else { return false }
            return position == update.position && reason.contains("does not open") && !reason.contains("Ann")
        }
        // The originals still open.
        #expect(try payload(try rig.vault.open(registration))["name"] == "Ann Canary-7a1")
    }

    @Test("forgetting destroys the key before the reply; every read then has nulls and forgotten: true")
    func forgetting() throws {
        let rig = try Rig()
        rig.harness.send("c1", "RegisterUser", Self.ann)
        rig.harness.send("c2", "RegisterUser", ["userId": "u2", "name": "Bo", "email": "bo@example.com"])
        let forgotten = rig.harness.send("c3", "ForgetUser", ["userId": "u1"])
        #expect(forgotten.eventTypes == ["UserForgotten", "EmailReleased"])
        #expect(try rig.keys.keys(for: ["u1", "u2"])["u1"] == .destroyed)
        #expect(try rig.keys.forgettingUsers().isEmpty)
        let served = try rig.served()
        let registration = try #require(served.first)
        #expect(
            registration.data
                == #"{"userId":"u1","name":null,"email":null,"gender":null,"birthday":null,"subscription":"free","forgotten":true}"#
        )
        let claim = try #require(served.first { $0.type == "EmailClaimed" && $0.metadata.commandId == "c1" })
        #expect(claim.data == #"{"email":null,"userId":"u1","forgotten":true}"#)
        #expect(try payload(try #require(served.first { $0.metadata.commandId == "c2" }))["name"] == "Bo")
        // The user is gone, the address is free again, and a retry answers like any retry.
        #expect(rig.harness.send("c4", "UpdateUserProfile", ["userId": "u1", "name": "X"]).code == .notFound)
        #expect(rig.harness.send("c5", "ForgetUser", ["userId": "u1"]).code == .notFound)
        let retried = rig.harness.send("c3", "ForgetUser", ["userId": "u1"])
        #expect(retried.accepted?.wasRetry == true)
        #expect(retried.eventTypes == ["UserForgotten", "EmailReleased"])
        #expect(retried.accepted?.events == forgotten.accepted?.events, "a retry gets the reply's bytes")
        #expect(forgotten.accepted?.events.last?.data == #"{"email":null,"userId":"u1","forgotten":true}"#)
        #expect(
            rig.harness.send("c6", "RegisterUser", ["userId": "u3", "name": "Cy", "email": "ann.canary@example.com"])
                .accepted != nil)
        // A fresh handler (nothing cached) reads the same from the log.
        let fresh = HandlerHarness(store: rig.store, buckets: rig.vault.buckets)
        #expect(fresh.send("c7", "ChangeSubscription", ["userId": "u1", "subscription": "premium"]).code == .notFound)
        #expect(
            fresh.send("c8", "RegisterUser", ["userId": "u4", "name": "Di", "email": "ann.canary@example.com"]).code
                == .emailTaken)
    }

    @Test("a forgetting whose key was not destroyed before a stop is finished from its mark")
    func unfinishedForgettingIsFinished() throws {
        let rig = try Rig()
        rig.harness.send("c1", "RegisterUser", Self.ann)
        // The commit and the mark happened, the destruction did not: append beneath the vault.
        try rig.keys.beginForgetting("u1")
        let stream = try rig.base.readWholeStream("user-u1")
        _ = try rig.base.append([
            AppendRequest(
                metadata: EventMetadata(commandId: "c2", correlationId: "c2", causationId: "c2"),
                events: [
                    NewEvent(
                        eventId: "e-forget", stream: "user-u1", type: "UserForgotten", data: #"{"userId":"u1"}"#,
                        recordedAt: 1)
                ],
                expectations: ["user-u1": .exactly(stream.count)])
        ])
        try rig.keys.beginForgetting("u9")  // begun, never appended: left alone
        #expect(try rig.store.finishUnfinishedForgetting() == ["u1"])
        #expect(try rig.keys.keys(for: ["u1"])["u1"] == .destroyed)
        #expect(try rig.keys.forgettingUsers() == ["u9"])
        #expect(try payload(try #require(try rig.served().first))["forgotten"] == true)
    }

    @Test("a process that reads another's UserForgotten stops serving that user's values from its cache")
    func anotherProcessForgets() throws {
        let rig = try Rig()
        rig.harness.send("c1", "RegisterUser", Self.ann)
        // A second process on the same log and key store, which has the user's key cached.
        let other = ProtectedEventStore(rig.base, vault: try PersonalDataVault(master: rig.master, keyStore: rig.keys))
        #expect(
            try payload(try #require(try other.read(fromPosition: 1, limit: 1, categories: nil).first))["name"]
                == "Ann Canary-7a1")
        // The first process forgets the user; the second reads the log on, then from the start.
        rig.harness.send("c2", "ForgetUser", ["userId": "u1"])
        let head = try rig.base.headPosition()
        _ = try other.visitedEvents(fromPosition: 3, limit: Int(head), categories: nil)
        let again = try #require(try other.read(fromPosition: 1, limit: 1, categories: nil).first)
        #expect(try payload(again)["forgotten"] == true)
        #expect(try payload(again)["name"] == .null)
    }

    @Test("a command decided before another process forgot its user is decided again, alone: not_found")
    func decidedBeforeAnotherProcessForgot() throws {
        let rig = try Rig()
        rig.harness.send("c1", "RegisterUser", Self.ann)
        // Another process, with its own vault and handler, forgets the user.
        let otherVault = try PersonalDataVault(master: rig.master, keyStore: rig.keys)
        let other = HandlerHarness(store: ProtectedEventStore(rig.base, vault: otherVault), buckets: otherVault.buckets)
        #expect(other.send("c2", "ForgetUser", ["userId": "u1"]).accepted != nil)
        // This handler still holds the user as live in its cache; its batch goes on without it.
        let outcomes = rig.harness.handler.handle([
            CommandRequest(
                commandId: "c3", type: "UpdateUserProfile", data: ["userId": "u1", "name": "Ann Again"],
                expectedVersion: .any),
            CommandRequest(
                commandId: "c4", type: "RegisterUser", data: ["userId": "u2", "name": "Bo", "email": "bo@example.com"],
                expectedVersion: .any),
        ])
        #expect(outcomes.first?.code == .notFound)
        #expect(outcomes.last?.accepted != nil)
        #expect(rig.harness.handler.commandsDecidedAgain >= 1)
    }

    @Test("a vault refuses a master key that is not the one its key store was written under")
    func wrongMasterKey() throws {
        let rig = try Rig()
        rig.harness.send("c1", "RegisterUser", Self.ann)
        #expect(throws: PersonalDataVault.OpeningError.wrongMasterKey) {
            _ = try PersonalDataVault(master: MasterKey.generate(), keyStore: rig.keys)
        }
        // The right one reads, in another process's vault with nothing cached.
        let again = try PersonalDataVault(master: rig.master, keyStore: rig.keys)
        let event = try #require(try rig.base.read(fromPosition: 1, limit: 1, categories: nil).first)
        #expect(try payload(try again.open(event))["name"] == "Ann Canary-7a1")
    }

    @Test("no event of a forgotten user is appended; buckets are keyed by the master key")
    func forgottenUsersWriteNothing() throws {
        let rig = try Rig()
        rig.harness.send("c1", "RegisterUser", Self.ann)
        rig.harness.send("c2", "ForgetUser", ["userId": "u1"])
        let late = AppendRequest(
            metadata: EventMetadata(commandId: "c3", correlationId: "c3", causationId: "c3"),
            events: [
                NewEvent(
                    eventId: "e-late", stream: "user-u1", type: "UserProfileUpdated",
                    data: #"{"userId":"u1","name":"Ann"}"#, recordedAt: 1)
            ],
            expectations: [:])
        let register = AppendRequest(
            metadata: EventMetadata(commandId: "c4", correlationId: "c4", causationId: "c4"),
            events: [
                NewEvent(
                    eventId: "e-other", stream: "user-u9", type: "UserRegistered",
                    data:
                        #"{"userId":"u9","name":"Nine","email":"nine@example.com","gender":"unknown","subscription":"free"}"#,
                    recordedAt: 1)
            ],
            expectations: [:])
        let results = try rig.store.append([late, register])
        guard case .conflict(let conflict) = results.first else {
            Issue.record("expected the forgotten user's request to conflict, got \(results)")
            return
        }
        #expect(conflict.stream == "user-u1" && conflict.actual == 2)
        #expect(results.last?.committed != nil, "the rest of the batch is appended")
        #expect(try rig.store.commandRecord("c3") == nil, "nothing of the refused request is in the log")
        let address = try EmailAddress("ann@example.com").normalized
        let other = try PersonalDataVault(master: MasterKey.generate(), keyStore: InMemoryPersonKeyStore())
        let buckets = (0..<20).map { index in
            (try? EmailAddress("user\(index)@example.com").normalized).map { rig.vault.buckets.bucket(of: $0) }
        }
        #expect(rig.vault.buckets.bucket(of: address) == rig.vault.buckets.bucket(of: address))
        #expect(Set(buckets.compactMap { $0 }).count > 15, "addresses spread over buckets")
        let differ = (0..<20).contains { index in
            guard let email = try? EmailAddress("user\(index)@example.com").normalized else { return false }
            return rig.vault.buckets.bucket(of: email) != other.buckets.bucket(of: email)
        }
        #expect(differ, "another master key spreads addresses differently")
    }
}
