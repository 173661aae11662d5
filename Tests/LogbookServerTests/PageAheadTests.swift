import Foundation
import LogbookApplication
import LogbookJSON
import LogbookMemory
import LogbookServer
import LogbookTestSupport
import LogbookZMQ
import Synchronization
import Testing

/// The worker's log-read loop writes a client's next page while that client reads the last:
/// the next read is answered from it (no second read of the log) with the same events and
/// `next` a fresh read gives and the head read again; any other read drops it.
@Suite("Log reads: the next page written ahead")
struct PageAheadTests {
    /// An in-memory log that counts its page reads.
    final class CountingLog: ForwardingEventStore, Sendable {
        let inner: any EventStore
        private let visits = Mutex(0)

        init(_ inner: any EventStore) { self.inner = inner }

        var pageReads: Int { visits.withLock { $0 } }

        func append(_ batch: [AppendRequest]) throws(EventStoreError) -> [AppendResult] { try inner.append(batch) }

        func visitEvents(
            fromPosition: Int64, limit: Int, categories: Set<String>?, _ body: (StoredEventBytes) -> Bool
        ) throws(EventStoreError) {
            visits.withLock { $0 += 1 }
            try inner.visitEvents(fromPosition: fromPosition, limit: limit, categories: categories, body)
        }
    }

    private static func append(_ log: CountingLog, _ count: Int, from first: Int) throws {
        _ = try log.append(
            (first..<first + count).map { n in
                AppendRequest(
                    metadata: EventMetadata(commandId: "c\(n)", correlationId: "c\(n)", causationId: "c\(n)"),
                    events: [
                        NewEvent(
                            eventId: "e\(n)", stream: "product-p\(n)", type: "Happened", data: #"{"n":1}"#,
                            recordedAt: 1_764_000_000_000)
                    ], expectations: [:])
            })
    }

    private static func read(_ from: Int, _ limit: Int, topics: [String]? = nil) -> JSONValue {
        var request: JSONObject = [
            "id": .string("r\(from)"), "type": "ReadLog", "from": .int(from), "limit": .int(limit),
        ]
        if let topics { request["topics"] = .array(topics.map(JSONValue.string)) }
        return .object(request)
    }

    private static func positions(_ reply: JSONObject) -> [Int] {
        guard case .array(let events)? = reply["events"] else { return [] }
        return events.compactMap { $0.objectValue?["position"]?.intValue }
    }

    /// Waits (bounded) until the loop has read the log `count` times.
    private static func waitForPageReads(_ log: CountingLog, _ count: Int) -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(patienceMilliseconds)
        while log.pageReads < count && ContinuousClock.now < deadline { usleep(2_000) }
        return log.pageReads >= count
    }

    @Test("the next page is answered from the page written ahead, with a fresh head; another read drops it")
    func nextPageFromAhead() throws {
        let directory = try SocketFolder.make("logbook-ahead")
        defer { try? FileManager.default.removeItem(at: directory) }
        let endpoints = ServiceEndpoints.ipc(in: directory)
        let log = CountingLog(InMemoryEventStore())
        try Self.append(log, 100, from: 1)
        let worker = try WorkerService(
            endpoints: endpoints, openStore: { () throws(EventStoreError) -> any EventStore in log },
            buckets: .forTests,
            clock: StepClock(), ids: CountingIds(),
            diagnostics: Diagnostics(process: "test", threshold: .error, clock: StepClock()))
        try worker.start()
        defer { worker.stop() }
        let context = try ZMQContext()
        let reader = try DealerClient(context, endpoints.log)
        let other = try DealerClient(context, endpoints.log)

        // A full page: the loop then writes 31…60 for this client.
        let first = try reader.request(Self.read(1, 30))
        #expect(Self.positions(first) == Array(1...30))
        #expect(first["next"] == .int(31) && first["head"] == .int(100))
        #expect(Self.waitForPageReads(log, 2), "the next page was not written ahead")

        // The log grows meanwhile: the page ahead's events stay, the head is read again.
        try Self.append(log, 1, from: 101)
        let second = try reader.request(Self.read(31, 30))
        #expect(Self.positions(second) == Array(31...60))
        #expect(second["next"] == .int(61) && second["head"] == .int(101))
        #expect(Self.waitForPageReads(log, 3))
        usleep(50_000)
        #expect(log.pageReads == 3, "the second page was read again instead of answered from the page ahead")

        // Another client's read drops this client's page ahead; its next read is read afresh, right.
        let others = try other.request(Self.read(1, 5))
        #expect(Self.positions(others) == Array(1...5))
        let third = try reader.request(Self.read(61, 30))
        #expect(Self.positions(third) == Array(61...90))
        #expect(third["next"] == .int(91) && third["head"] == .int(101))

        // A read that is not the one written ahead (other topics) gets its own page.
        let fourth = try reader.request(Self.read(91, 30, topics: ["users"]))
        #expect(Self.positions(fourth) == [])
        #expect(fourth["next"] == .int(102) && fourth["head"] == .int(101))
        // The last page reaches the head: nothing is written ahead after it.
        let reads = log.pageReads
        let last = try reader.request(Self.read(91, 30))
        #expect(Self.positions(last) == Array(91...101))
        #expect(last["next"] == .int(102))
        usleep(50_000)
        #expect(log.pageReads == reads + 1)
    }
}
