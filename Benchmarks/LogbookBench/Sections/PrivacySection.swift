import LogbookApplication
import LogbookCrypto
import LogbookDomain
import LogbookJSON
import LogbookMemory
import LogbookSQLite
import Synchronization

extension BenchSession {
    /// Section: what sealing personal data costs, each figure beside the same work without
    /// it in the same run, in this process (no sockets: the difference is the sealing).
    ///
    /// - sealing and opening one event with two personal fields, against the codec's own
    ///   round trip of that event;
    /// - the command path: the command handler over a SQLite log (each batch one durable
    ///   commit), through `ProtectedEventStore` with a key store beside it, against the same
    ///   commands on a plain log;
    /// - a rebuild's reading: every event of each log read and turned into its row change,
    ///   the sealed log opened on the way, against the plain one.
    mutating func measurePrivacy() throws(BenchError) {
        let users = options.quick ? 2_000 : 20_000
        progress("bench: privacy: sealing one event, \(users) users' commands on a sealed and a plain log")
        let micro = try Self.sealingCost(events: options.quick ? 20_000 : 200_000)
        figures.append(
            BenchFigure(
                section: "privacy", name: "seal and open an event with two personal fields",
                value: micro.sealed, unit: .microseconds,
                baselines: [.init("the codec's encode and decode of that event (same run)", micro.codec)],
                target: BenchFigure.Target(.atMost, 5, "≤ 5 µs"),
                note: "one thread; XChaCha20-Poly1305 per field, the key cached as a worker keeps it"))

        let sealed = try PrivacyLog(directory: try run.scratch.subdirectory("privacy-sealed"), sealing: true)
        let plain = try PrivacyLog(directory: try run.scratch.subdirectory("privacy-plain"), sealing: false)
        var commands = (sealed: 0.0, plain: 0.0)
        // Alternated, so drift of the machine falls on both alike.
        for round in 0..<2 {
            commands.plain += try plain.runCommands(users: users / 2, round: round) / 2
            commands.sealed += try sealed.runCommands(users: users / 2, round: round) / 2
        }
        figures.append(
            BenchFigure(
                section: "privacy", name: "commands/s through the command handler, personal data sealed",
                value: commands.sealed, unit: .perSecond,
                baselines: [.init("the same commands on a plain log (same run)", commands.plain)],
                note: "register, profile update, subscription change per user; batches of 500, one SQLite commit each"))
        let reading = (sealed: try sealed.readAll(), plain: try plain.readAll())
        figures.append(
            BenchFigure(
                section: "privacy", name: "events/s read and projected as a rebuild does, personal data sealed",
                value: reading.sealed, unit: .perSecond,
                baselines: [.init("the same log unsealed (same run)", reading.plain)],
                note: "read in pages of 10,000 and turned into row changes, nothing written"))
    }

    /// Microseconds per event to seal and open a `UserProfileUpdated` with a name and an
    /// email, and, as the baseline, to encode and decode it with the codec.
    private static func sealingCost(events: Int) throws(BenchError) -> (sealed: Double, codec: Double) {
        let vault = try PrivacyLog.vault(keyStore: InMemoryPersonKeyStore())
        let event = DomainEvent.user(
            .profileUpdated(
                UserProfileUpdated(
                    userId: try Self.domain { () throws(DomainError) in try UserId("u1") },
                    name: try Self.domain { () throws(DomainError) in try PersonName("Ann Lee") },
                    email: try Self.domain { () throws(DomainError) in try EmailAddress("ann.lee@example.com") })))
        let data = EventCodec.encodedText(event)
        let request = AppendRequest(
            metadata: EventMetadata(commandId: "c1", correlationId: "c1", causationId: "c1"),
            events: [NewEvent(eventId: "e1", stream: "user-u1", type: event.typeName, data: data, recordedAt: 0)],
            expectations: [:])
        var opened = 0
        let start = BenchClock.nanoseconds()
        do throws(EventStoreError) {
            for _ in 0..<events {
                let sealed = try vault.seal([request]).requests[0].events[0]
                let stored = RecordedEvent(
                    position: 1, eventId: sealed.eventId, stream: sealed.stream, version: 1, type: sealed.type,
                    data: sealed.data, metadata: request.metadata, recordedAt: 0)
                opened &+= try vault.open(stored).data.utf8.count
            }
        } catch {
            throw BenchError("privacy: sealing failed: \(error)")
        }
        let sealedMicroseconds = BenchClock.seconds(since: start) * 1e6 / Double(events)
        let codecStart = BenchClock.nanoseconds()
        do throws(EventDecodingError) {
            for _ in 0..<events {
                let decoded = try EventCodec.decode(type: event.typeName, stream: "user-u1", data: data)
                opened &+= EventCodec.encodedText(decoded).utf8.count
            }
        } catch {
            throw BenchError("privacy: decoding failed: \(error)")
        }
        let codecMicroseconds = BenchClock.seconds(since: codecStart) * 1e6 / Double(events)
        guard opened > 0 else { throw BenchError("privacy: nothing was opened") }
        return (sealedMicroseconds, codecMicroseconds)
    }

    private static func domain<T>(_ make: () throws(DomainError) -> T) throws(BenchError) -> T {
        do {
            return try make()
        } catch {
            throw BenchError("privacy: a bench value was refused: \(error.message)")
        }
    }
}

/// A SQLite log in its own folder and a command handler on it, sealed (with a key store
/// and a vault beside it) or plain.
private struct PrivacyLog {
    let store: any EventStore
    let handler: CommandHandler

    init(directory: String, sealing: Bool) throws(BenchError) {
        do {
            let base = try SQLiteEventStore(path: directory + "/events.sqlite3")
            if sealing {
                let vault = try Self.vault(keyStore: try SQLitePersonKeyStore(path: directory + "/keys.sqlite3"))
                store = ProtectedEventStore(base, vault: vault)
                handler = CommandHandler(store: store, clock: PrivacyClock(), ids: PrivacyIds(), buckets: vault.buckets)
            } else {
                store = base
                let vault = try Self.vault(keyStore: InMemoryPersonKeyStore())
                handler = CommandHandler(store: store, clock: PrivacyClock(), ids: PrivacyIds(), buckets: vault.buckets)
            }
        } catch let error as BenchError {
            throw error
        } catch {
            throw BenchError("privacy: cannot open a log in \(directory): \(error)")
        }
    }

    static func vault(keyStore: any PersonKeyStore) throws(BenchError) -> PersonalDataVault {
        do {
            return try PersonalDataVault(master: MasterKey.generate(), keyStore: keyStore)
        } catch {
            throw BenchError("privacy: cannot open a vault: \(error)")
        }
    }

    /// Registers `users` users, updates each one's profile and changes each one's
    /// subscription, in batches of 500; answers commands a second.
    func runCommands(users: Int, round: Int) throws(BenchError) -> Double {
        var requests: [CommandRequest] = []
        requests.reserveCapacity(users * 3)
        for index in 0..<users {
            let id = "r\(round)u\(index)"
            requests.append(
                CommandRequest(
                    commandId: "\(id)-a", type: "RegisterUser",
                    data: [
                        "userId": .string(id), "name": .string("User \(index)"),
                        "email": .string("\(id)@bench.example"), "gender": "female", "birthday": "1990-02-28",
                    ]))
        }
        for index in 0..<users {
            let id = "r\(round)u\(index)"
            requests.append(
                CommandRequest(
                    commandId: "\(id)-b", type: "UpdateUserProfile",
                    data: ["userId": .string(id), "name": .string("Renamed \(index)")]))
            requests.append(
                CommandRequest(
                    commandId: "\(id)-c", type: "ChangeSubscription",
                    data: ["userId": .string(id), "subscription": "premium"]))
        }
        let start = BenchClock.nanoseconds()
        var accepted = 0
        var offset = 0
        while offset < requests.count {
            let batch = Array(requests[offset..<min(offset + 500, requests.count)])
            accepted += handler.handle(batch).filter { $0.accepted != nil }.count
            offset += batch.count
        }
        let seconds = BenchClock.seconds(since: start)
        guard accepted == requests.count else {
            throw BenchError("privacy: \(requests.count - accepted) of \(requests.count) commands were refused")
        }
        return Double(requests.count) / seconds
    }

    /// Reads the whole log in pages and turns each event into its row change; answers
    /// events a second.
    func readAll() throws(BenchError) -> Double {
        let start = BenchClock.nanoseconds()
        var read = 0
        var next: Int64 = 1
        do throws(EventStoreError) {
            while true {
                var last: Int64 = 0
                try store.visitEvents(fromPosition: next, limit: 10_000, categories: nil) { event in
                    _ = try? Projector.change(
                        position: event.position, recordedAt: event.recordedAt, stream: event.stream,
                        type: event.type, data: event.data, decoded: { event.recordedEvent })
                    read += 1
                    last = event.position
                    return true
                }
                guard last > 0 else { break }
                next = last + 1
            }
        } catch {
            throw BenchError("privacy: reading the log failed: \(error)")
        }
        guard read > 0 else { throw BenchError("privacy: the log was empty") }
        return Double(read) / BenchClock.seconds(since: start)
    }
}

/// The time every event of the privacy section is recorded at.
private struct PrivacyClock: Clock {
    func now() -> Timestamp { Timestamp(millisecondsSinceEpoch: 1_780_000_000_000) }
}

/// Event ids counted from 1, unique within the process.
private final class PrivacyIds: IDGenerator {
    private let next = Atomic<Int>(0)

    func newEventId() -> String { "privacy-\(next.add(1, ordering: .relaxed).newValue)" }
}
