import Foundation
import LogbookApplication
import LogbookDomain
import LogbookJSON
import LogbookMemory
import LogbookSQLite
import LogbookTestSupport
import LogbookWire
import Testing

@testable import LogbookBench

@Suite("Bench: the commands it sends and the log it generates are valid")
struct GeneratedLoadTests {
    struct FixedClock: Clock {
        func now() -> Timestamp { Timestamp(millisecondsSinceEpoch: 1_764_000_000_000) }
    }

    final class CountingIds: IDGenerator, @unchecked Sendable {
        private let lock = NSLock()
        private var next = 0

        func newEventId() -> String {
            lock.lock()
            defer { lock.unlock() }
            next += 1
            return "e\(next)"
        }
    }

    /// The request bytes as the worker reads them.
    static func command(_ bytes: [UInt8]) throws -> CommandRequest {
        try CommandRequest(wire: WireRequest(frame: bytes))
    }

    @Test("the seeded users and products make every command of the mix succeed")
    func mixIsAccepted() throws {
        let handler = CommandHandler(
            store: InMemoryEventStore(), clock: FixedClock(), ids: CountingIds(), buckets: .forTests)
        let seeds = SeedCommands(tag: "t0abc", seeded: 4)
        let mix = CommandMix(tag: "t0abc", seeded: 4)
        for client in 0..<3 {
            let requests = try (0..<8).map { try Self.command(seeds.request(client: client, sequence: $0)) }
            for outcome in handler.handle(requests) { #expect(outcome.accepted != nil, "\(outcome)") }
        }
        for client in 0..<3 {
            let requests = try (0..<40).map { try Self.command(mix.request(client: client, sequence: $0)) }
            #expect(Set(requests.map(\.type)) == ["RegisterUser", "AddProduct", "PurchaseProduct", "CreatePost"])
            #expect(Set(requests.map(\.commandId)).count == 40)
            for outcome in handler.handle(requests) { #expect(outcome.accepted?.wasRetry == false, "\(outcome)") }
        }
        // Another run against the same worker uses the same seeds under fresh ids.
        let next = CommandMix(tag: "t0abch", seedTag: "t0abc", seeded: 4)
        let again = try (0..<8).map { try Self.command(next.request(client: 0, sequence: $0)) }
        for outcome in handler.handle(again) { #expect(outcome.accepted?.wasRetry == false, "\(outcome)") }
    }

    @Test("echo requests carry the sequence number and have the asked size")
    func echoRequests() {
        let request = EchoRequests(size: 180).request(client: 2, sequence: 17)
        #expect(request.count == 180)
        #expect(ReplyScanner.sequence(in: request) == 17)
        #expect(ReplyScanner.isOK(request) == true)
    }

    @Test("the plan puts exactly the asked events on exactly the asked streams")
    func plan() throws {
        let plan = try SyntheticHistory.Plan(events: 1_000_000, streams: 100_000)
        #expect(plan.events == 1_000_000)
        #expect(plan.streams == 100_000)
        #expect(throws: BenchError.self) { try SyntheticHistory.Plan(events: 100, streams: 1_000) }
    }

    @Test("the generated log is what the service would write: it passes the audit, streams and all")
    func generatedLogAudits() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bench-log-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.sqlite3").path
        let summary = try LogGenerator.write(events: 3_000, streams: 400, to: path)
        #expect(summary.events == 3_000)

        let store = try SQLiteEventStore(path: path)
        var audit = LogAudit()
        var streams = Set<String>()
        var types = Set<String>()
        try store.forEachPage(pageSize: 1_000) { (page: [RecordedEvent]) throws(Never) -> Bool in
            for event in page {
                audit.check(event)
                streams.insert(event.stream)
                types.insert(event.type)
            }
            return true
        }
        audit.finish()
        #expect(audit.violations.isEmpty, "\(audit.violations.prefix(5))")
        #expect(audit.eventsChecked == 3_000)
        #expect(streams.count == 400)
        #expect(
            types.isSuperset(of: [
                "UserRegistered", "EmailClaimed", "ProductAdded", "PostCreated", "ProductPurchased", "OrderPlaced",
                "ProductRestocked", "PostEdited",
            ]))
        // The same seed writes the same log.
        let again = directory.appendingPathComponent("again.sqlite3").path
        _ = try LogGenerator.write(events: 3_000, streams: 400, to: again)
        let first = try store.read(fromPosition: 1, limit: 50, categories: nil)
        let second = try SQLiteEventStore(path: again).read(fromPosition: 1, limit: 50, categories: nil)
        #expect(first.map(\.eventId) == second.map(\.eventId))
        #expect(first.map(\.data) == second.map(\.data))
    }

    @Test("options: lists of sections and clients are read, unknown ones refused")
    func options() throws {
        #expect(try BenchOptions.sections(from: "throughput,feed") == [.throughput, .feed])
        #expect(throws: BenchError.self) { try BenchOptions.sections(from: "throughput,speed") }
        #expect(try BenchOptions.clients(from: "1,8,64") == [1, 8, 64])
        #expect(throws: BenchError.self) { try BenchOptions.clients(from: "0") }
        let quick = BenchOptions.standard(quick: true)
        #expect(quick.sections == Set(BenchOptions.Section.allCases).subtracting([.scale]))
        #expect(quick.logEvents < BenchOptions.standard(quick: false).logEvents)
    }
}
