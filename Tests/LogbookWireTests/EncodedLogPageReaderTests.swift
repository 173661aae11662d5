import LogbookApplication
import LogbookJSON
import LogbookTestSupport
import LogbookWire
import Testing

/// The located (undecoded) reading of a `ReadLog` reply must hold exactly the page the
/// decoding reader gives, and decline exactly what it declines.
@Suite("Encoded log page reader")
struct EncodedLogPageReaderTests {
    /// The page's events decoded again from the located fields.
    static func decoded(_ bytes: [UInt8]) -> (id: String, page: LogPage)? {
        guard let (id, encoded) = EncodedLogPageReader.page(bytes), let events = encoded.recordedEvents() else {
            return nil
        }
        return (id, LogPage(events: events, next: encoded.next, head: encoded.head))
    }

    @Test("locates every field of what the worker writes")
    func sameAsDecodingReader() throws {
        var generator = SeededGenerator(seed: 1618)
        for round in 0..<200 {
            let page = LogPageReaderTests.randomPage(&generator, count: round % 20)
            let id = RandomJSON.string(&generator)
            let bytes = LogReader.replyBytes(id: id, page)
            let located = try #require(Self.decoded(bytes))
            #expect(located.id == id)
            #expect(located.page == page)
            let encoded = try #require(EncodedLogPageReader.page(bytes)?.page)
            #expect(encoded.events.map(\.position) == page.events.map(\.position))
            #expect(encoded.lastPosition == page.events.last?.position)
            for (located, event) in zip(encoded.events, page.events) {
                let envelope = try #require(encoded.envelope(of: located))
                #expect(envelope.stream == event.stream)
                #expect(envelope.bytes == (try EnvelopeWriter.bytes(event)))
            }
        }
    }

    @Test("reads a changed reply exactly when the decoding reader does, into the same page")
    func mutations() throws {
        var generator = SeededGenerator(seed: 4669)
        let pieces = [" ", "0", "-", "\"", "\\", "{", "}", ",", ":", "1", "]", "\\u0041", "e"].map { Array($0.utf8) }
        var read = 0
        for _ in 0..<3_000 {
            var bytes = LogReader.replyBytes(id: "r", LogPageReaderTests.randomPage(&generator, count: 2))
            let at = Int.random(in: 0..<bytes.count, using: &generator)
            if generator.chance(50) {
                bytes.replaceSubrange(at...at, with: generator.pick(pieces))
            } else {
                bytes.insert(contentsOf: generator.pick(pieces), at: at)
            }
            let decoding = LogPageReader.page(bytes)
            let located = Self.decoded(bytes)
            #expect((decoding == nil) == (located == nil), "\(String(decoding: bytes, as: UTF8.self))")
            guard let decoding, let located else { continue }
            read += 1
            #expect(located.id == decoding.id)
            #expect(located.page == decoding.page)
        }
        #expect(read > 100)
    }

    @Test(
        "declines replies in any other form",
        arguments: [
            #"{"id":"r","ok":false,"error":{"code":"internal","message":"x"}}"#,
            #"{"id":"r","ok":true,"events":[],"next":1,"head":0,"extra":1}"#,
            #"{"id":"r","ok":true,"events":[{"eventId":"e","position":0,"stream":"s","version":1,"type":"T","data":{},"metadata":{"commandId":"c","correlationId":"c","causationId":"c"},"recordedAt":"2026-01-01T00:00:00.000Z"}],"next":1,"head":0}"#,
            #"{"id":"r","ok":true,"events":[{"eventId":"e","position":1,"stream":"s","version":1,"type":"T","data":{"a":1,"a":2},"metadata":{"commandId":"c","correlationId":"c","causationId":"c"},"recordedAt":"2026-01-01T00:00:00.000Z"}],"next":2,"head":1}"#,
            #"{"id":"r","ok":true,"events":[{"eventId":"e","position":1,"stream":"s","version":1,"type":"T","data":{not json},"metadata":{"commandId":"c","correlationId":"c","causationId":"c"},"recordedAt":"2026-01-01T00:00:00.000Z"}],"next":2,"head":1}"#,
            #"{"id":"r","ok":true,"events":[{"eventId":"e","position":1,"stream":"s","version":1,"type":"T","data":{},"metadata":{"commandId":"c","correlationId":"c","causationId":"c"},"recordedAt":"2026-01-01T00:00:00.000Z"}"#,
        ])
    func declines(text: String) {
        #expect(EncodedLogPageReader.page(Array(text.utf8)) == nil)
    }

    @Test("a page whose fields lie outside its bytes cannot be made")
    func fieldsOutsideTheBytes() {
        let event = EncodedLogPage.Event(
            position: 1, version: 1, recordedAt: 0, stream: 1..<2, type: 1..<2, data: 0..<40, eventId: 0,
            commandId: 0, correlationId: 0, causationId: 0)
        #expect(EncodedLogPage(bytes: Array("\"s\"".utf8), events: [event], next: 2, head: 1) == nil)
    }
}
