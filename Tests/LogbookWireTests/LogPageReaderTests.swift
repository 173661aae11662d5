import LogbookApplication
import LogbookJSON
import LogbookTestSupport
import LogbookWire
import Testing

/// The byte-level `ReadLog` reply reader must give exactly the page the general reader
/// gives, and step aside (nil) for anything not in the worker's exact form.
@Suite("Log page reader")
struct LogPageReaderTests {
    /// The general path: parse the reply, then `WireDecoding.logPage`.
    static func slowPage(_ bytes: [UInt8]) -> (id: String, page: LogPage)? {
        guard case .object(let reply)? = try? JSONParser.parse(bytes), case .string(let id)? = reply["id"],
            reply["ok"] == .bool(true), let page = try? WireDecoding.logPage(from: reply)
        else { return nil }
        return (id, page)
    }

    static func randomPage(_ generator: inout SeededGenerator, count: Int) -> LogPage {
        var position = Int64.random(in: 1...1_000, using: &generator)
        let events = (0..<count).map { _ in
            position += Int64.random(in: 1...3, using: &generator)
            var event = EnvelopeWriterTests.randomEvent(
                &generator, data: JSONWriter.string(.object(RandomJSON.object(&generator, anything: false))))
            event.position = position
            event.version = Int.random(in: 1...1_000_000, using: &generator)
            event.recordedAt = Int64.random(in: -62_135_596_800_000...253_402_300_799_999, using: &generator)
            return event
        }
        return LogPage(events: events, next: position + 1, head: position + Int64.random(in: 0...5, using: &generator))
    }

    @Test("reads what the worker writes into the same page the general reader gives")
    func sameAsGeneralReader() throws {
        var generator = SeededGenerator(seed: 314)
        for round in 0..<200 {
            let page = Self.randomPage(&generator, count: round % 20)
            let id = RandomJSON.string(&generator)
            let bytes = LogReader.replyBytes(id: id, page)
            let fast = try #require(LogPageReader.page(bytes))
            #expect(fast.id == id)
            #expect(fast.page == page)
            #expect(fast.page == Self.slowPage(bytes)?.page)
        }
    }

    @Test("whenever it reads a changed reply, the general reader reads the same page")
    func mutations() throws {
        var generator = SeededGenerator(seed: 2718)
        let pieces = [" ", "0", "-", "\"", "\\", "{", "}", ",", ":", "1", "]", "\\u0041", "e"].map { Array($0.utf8) }
        var read = 0
        var declined = 0
        for _ in 0..<3_000 {
            var bytes = LogReader.replyBytes(id: "r", Self.randomPage(&generator, count: 2))
            let at = Int.random(in: 0..<bytes.count, using: &generator)
            if generator.chance(50) {
                bytes.replaceSubrange(at...at, with: generator.pick(pieces))
            } else {
                bytes.insert(contentsOf: generator.pick(pieces), at: at)
            }
            guard let fast = LogPageReader.page(bytes) else {
                declined += 1
                continue
            }
            read += 1
            let slow = try #require(Self.slowPage(bytes), "\(String(decoding: bytes, as: UTF8.self))")
            #expect(fast.id == slow.id)
            #expect(fast.page == slow.page)
        }
        #expect(read > 100)
        #expect(declined > 1_000)
    }

    @Test(
        "declines replies in any other form",
        arguments: [
            #"{"id":"r","ok":false,"error":{"code":"internal","message":"x"}}"#,
            #"{"id":"r","ok":true,"events":[],"next":1,"head":0,"extra":1}"#,
            #"{"ok":true,"id":"r","events":[],"next":1,"head":0}"#,
            #"{"id":"r", "ok":true,"events":[],"next":1,"head":0}"#,
            #"{"id":"r","ok":true,"events":[],"next":1.0,"head":0}"#,
            #"{"id":"r","ok":true,"events":[{"eventId":"e","position":0,"stream":"s","version":1,"type":"T","data":{},"metadata":{"commandId":"c","correlationId":"c","causationId":"c"},"recordedAt":"2026-01-01T00:00:00.000Z"}],"next":1,"head":0}"#,
            #"{"id":"r","ok":true,"events":[{"eventId":"e","position":1,"stream":"s","version":1,"type":"T","data":[],"metadata":{"commandId":"c","correlationId":"c","causationId":"c"},"recordedAt":"2026-01-01T00:00:00.000Z"}],"next":2,"head":1}"#,
            #"{"id":"r","ok":true,"events":[{"eventId":"e","position":1,"stream":"s","version":1,"type":"T","data":{},"metadata":{"commandId":"c","correlationId":"c","causationId":"c"},"recordedAt":"2026-01-01T00:00:00Z"}],"next":2,"head":1}"#,
            #"{"id":"r","ok":true,"events":[{"eventId":"e","position":1,"stream":"s","version":1,"type":"T","data":{"a":1,"a":2},"metadata":{"commandId":"c","correlationId":"c","causationId":"c"},"recordedAt":"2026-01-01T00:00:00.000Z"}],"next":2,"head":1}"#,
        ])
    func declines(text: String) {
        #expect(LogPageReader.page(Array(text.utf8)) == nil)
    }

    @Test("reads a well-formed event of the worker's form")
    func reads() throws {
        let text =
            #"{"id":"r","ok":true,"events":[{"eventId":"e","position":1,"stream":"s","version":1,"type":"T","data":{"a":"\u0001é"},"metadata":{"commandId":"c","correlationId":"d","causationId":"f"},"recordedAt":"2026-01-01T00:00:00.000Z"}],"next":2,"head":1}"#
        let (id, page) = try #require(LogPageReader.page(Array(text.utf8)))
        #expect(id == "r")
        #expect(page.events.map(\.data) == [#"{"a":"\u0001é"}"#])
        #expect(page == Self.slowPage(Array(text.utf8))?.page)
    }
}
