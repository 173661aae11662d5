import LogbookApplication
import LogbookJSON
import LogbookTestSupport
import LogbookWire
import Testing

/// The contract for reading events as borrowed bytes (`visitEvents`), and the `ReadLog`
/// pages the worker writes from them: the same events as `read`, and the same reply bytes
/// as the `RecordedEvent` path (`LogReader.replyBytes`), whatever text the fields hold.
@Suite("EventStore contract: events visited as bytes, and ReadLog pages written from them")
struct VisitEventsContractTests {
    /// Text with every kind of character a field can hold: ASCII, multi-byte UTF-8, the
    /// characters JSON escapes, control characters, DEL, and long runs (past eight bytes).
    static let texts = [
        "plain", "é😀 ünïcodé", "quote\"and\\backslash", "tab\tnew\nline\r\u{1}ctl\u{1f}del\u{7f}", "",
        String(repeating: "0123456789abcdef", count: 20), "a-b-c",
    ]

    /// Payloads for `text`: canonical (copied as they are), valid JSON in another form
    /// (written again by the slow path).
    static func payloads(_ text: String, _ index: Int) -> [String] {
        [
            JSONWriter.string(.object(["text": .string(text), "n": .int(index), "list": [true, .null, -7]])),
            "{ \"spaced\" : \(JSONWriter.string(.string(text))), \"n\": 1.50 }",
        ]
    }

    /// Appends a log with awkward text in every field, in user, order, product and
    /// uncategorised streams; with `largeEvents`, that many 60 KB payloads after them, the
    /// last of 250 KB (so pages of them are cut at `budget`). Returns the head.
    @discardableResult
    static func seed(_ store: any EventStore, largeEvents: Int = 0) throws -> Int64 {
        var requests: [AppendRequest] = []
        for (index, text) in texts.enumerated() {
            let events = ["user-\(text)", "order-\(text)", "product-\(index)", text].enumerated().flatMap {
                offset, stream in
                payloads(text, index).enumerated().map { kind, data in
                    NewEvent(
                        eventId: "\(text)-\(offset)-\(kind)", stream: stream, type: offset == 0 ? text : "Typed",
                        data: data, recordedAt: [0, -1, 1_764_000_000_123, 253_402_300_800_000][offset])
                }
            }
            requests.append(
                AppendRequest(
                    metadata: EventMetadata(
                        commandId: "command-\(index)-\(text)", correlationId: text, causationId: "c\"\(index)"),
                    events: events, expectations: [:], dependencies: [], answer: nil))
        }
        for index in 0..<largeEvents {
            // The last one alone is over `budget`: a page holds it all the same.
            let blob = String(repeating: "x", count: index == largeEvents - 1 ? 250_000 : 60_000)
            requests.append(
                Requests.request(
                    "large-\(index)",
                    [Requests.event("post-large\(index % 3)", "Large", data: #"{"blob":"\#(blob)"}"#)]))
        }
        _ = try store.append(requests)
        return try store.headPosition()
    }

    /// The byte budget of the pages in `replyBytesEqual`: a few of its large events.
    static let budget = 200_000

    /// The events `visitEvents` hands out (copied), stopping after `stopAfter` when given.
    static func visited(
        _ store: any EventStore, from: Int64, limit: Int, categories: Set<String>?, stopAfter: Int? = nil
    ) throws -> [RecordedEvent] {
        var events: [RecordedEvent] = []
        try store.visitEvents(fromPosition: from, limit: limit, categories: categories) { event in
            events.append(event.recordedEvent)
            return events.count != stopAfter
        }
        return events
    }

    @Test(
        "visiting events as bytes yields exactly what read returns, from any point, by category",
        arguments: StoreKind.allCases)
    func visitEqualsRead(kind: StoreKind) throws {
        let store = try StoreHarness(kind).store
        let head = try Self.seed(store)
        for categories: Set<String>? in [nil, ["user"], ["order", "product"], ["nothing"], []] {
            for from in [Int64(0), 1, 3, head, head + 1] {
                for limit in [0, 1, 5, 1_000] {
                    let read = try store.read(fromPosition: from, limit: limit, categories: categories)
                    #expect(
                        try Self.visited(store, from: from, limit: limit, categories: categories) == read,
                        "from \(from), limit \(limit), \(String(describing: categories))")
                }
            }
        }
        let all = try store.read(fromPosition: 1, limit: 1_000, categories: nil)
        #expect(all.count == Int(head))
        #expect(try Self.visited(store, from: 1, limit: 1_000, categories: nil, stopAfter: 3) == Array(all.prefix(3)))
        // A visit stopped early leaves the store as it was: reads and appends go on.
        _ = try store.append([Requests.simple("after-stop", stream: "user-after")])
        #expect(try store.read(fromPosition: head + 1, limit: 10, categories: nil).count == 1)
    }

    @Test(
        "a ReadLog page written from the rows equals the RecordedEvent path's bytes, topics and the byte budget included",
        arguments: StoreKind.allCases)
    func replyBytesEqual(kind: StoreKind) throws {
        let store = try StoreHarness(kind).store
        // 60 KB payloads against a budget of 200 KB: a page of them is cut after three.
        let head = try Self.seed(store, largeEvents: 12)
        let reader = LogReader(store: store, byteBudget: Self.budget)
        let requests = [
            LogReadRequest(from: 1, limit: 10_000), LogReadRequest(from: 2, limit: 3),
            LogReadRequest(from: 1, limit: 10_000, topics: [.users]),
            LogReadRequest(from: 4, limit: 7, topics: [.orders, .products]),
            LogReadRequest(from: 1, limit: 10_000, topics: [.posts]), LogReadRequest(from: head + 1, limit: 10),
            LogReadRequest(from: head, limit: 10_000),
        ]
        var cut = false
        for (index, request) in requests.enumerated() {
            let expected = try ReadLogOracle.page(store, request, byteBudget: Self.budget)
            cut = cut || (expected.events.count < 10_000 && expected.next <= expected.head && request.limit == 10_000)
            var output: [UInt8] = Array("stale bytes of an earlier page".utf8)
            for id in ["r-\(index)", "quote\"and\\é"] {
                try reader.writeReply(id: id, reading: request, into: &output)
                #expect(output == LogReader.replyBytes(id: id, expected), "request \(index)")
                #expect(output == JSONWriter.bytes(LogReader.reply(id: id, expected)), "request \(index)")
            }
        }
        #expect(cut, "some page was cut at the byte budget")
        // Paging through the whole log from the rows sees every event once, as the oracle does.
        var next: Int64 = 1
        var pages = 0
        var output: [UInt8] = []
        while next <= head {
            let request = LogReadRequest(from: next, limit: 10_000)
            let expected = try ReadLogOracle.page(store, request, byteBudget: Self.budget)
            try reader.writeReply(id: "page", reading: request, into: &output)
            #expect(output == LogReader.replyBytes(id: "page", expected))
            #expect(expected.next > next)
            next = expected.next
            pages += 1
        }
        #expect(pages >= 2)
    }

    @Test("a payload that is not JSON, written into the file behind the service's back, gets the same error reply")
    func damagedPayload() throws {
        let harness = try StoreHarness(.sqlite)
        let head = try Self.seed(harness.store)
        let path = try #require(harness.databasePath)
        let columns =
            "(position, event_id, stream, category, version, type, data, command_id, correlation_id, causation_id, "
            + "recorded_at)"
        let insert = RawSQLResult(
            path: path,
            sql:
                "INSERT INTO events \(columns) VALUES (\(head + 1), 'e', 'user-damaged', 'user', 1, 'SubscriptionChanged', "
                + "'{not json', 'damage', 'damage', 'damage', 0)")
        #expect(insert.succeeded, "\(insert.message)")
        _ = try harness.store.append([Requests.simple("after-damage", stream: "user-after")])
        let reader = LogReader(store: harness.store)
        var output: [UInt8] = []
        for request in [
            LogReadRequest(from: 1, limit: 10_000), LogReadRequest(from: head + 1, limit: 1),
            LogReadRequest(from: 1, limit: 10_000, topics: [.users]),
        ] {
            let expected = LogReader.replyBytes(
                id: "d", try ReadLogOracle.page(harness.store, request, byteBudget: LogReader.pageByteBudget))
            try reader.writeReply(id: "d", reading: request, into: &output)
            #expect(output == expected)
            let reply = try JSONParser.parse(output).objectValue
            #expect(reply?["ok"] == .bool(false))
            #expect(reply?["error"]?.objectValue?["code"] == .string("internal"))
        }
        // Pages that end before it, or start after it, are still served.
        try reader.writeReply(id: "d", reading: LogReadRequest(from: head + 2, limit: 10), into: &output)
        #expect(try JSONParser.parse(output).objectValue?["ok"] == .bool(true))
    }
}

/// The page `LogReader.read` returned before pages were written from the rows, computed
/// here again from `read`'s `RecordedEvent`s: at most `limit` events, cut before the event
/// whose payload takes the page over the byte budget (never before the first), `next` past
/// the head only when the page neither filled nor was cut.
enum ReadLogOracle {
    static func page(_ store: any EventStore, _ request: LogReadRequest, byteBudget: Int) throws -> LogPage {
        let head = try store.headPosition()
        var events = try store.read(fromPosition: request.from, limit: request.limit, categories: request.categories)
        let read = events.count
        var bytes = 0
        if let cut = events.firstIndex(where: { event in
            bytes += event.data.utf8.count + LogReader.envelopeOverhead
            return bytes > byteBudget
        }) {
            events.removeSubrange(max(cut, 1)...)
        }
        var next = (events.last?.position).map { $0 + 1 } ?? request.from
        if read < request.limit && events.count == read { next = max(next, head + 1) }
        return LogPage(events: events, next: next, head: head)
    }
}
