import LogbookApplication
import LogbookDomain
import LogbookJSON
import LogbookTestSupport
import LogbookWire
import Testing

/// The byte-writing envelope path must give exactly what the `JSONValue` path gives, for
/// any event: payloads in canonical form (copied), in any other form (parsed and written
/// again), or not JSON at all (refused the same way).
@Suite("Envelope writer")
struct EnvelopeWriterTests {
    static func randomEvent(_ generator: inout SeededGenerator, data: String) -> RecordedEvent {
        let instants: [Int64] = [
            0, -1, 1, 86_399_999, 86_400_000, -62_135_596_800_000, -62_135_596_800_001, 253_402_300_799_999,
            253_402_300_800_000, 1_767_225_600_123, .max / 2, .min / 2,
        ]
        return RecordedEvent(
            position: Int64.random(in: 1...Int64.max, using: &generator),
            eventId: RandomJSON.string(&generator), stream: RandomJSON.string(&generator),
            version: Int.random(in: 1...Int.max, using: &generator), type: RandomJSON.string(&generator), data: data,
            metadata: EventMetadata(
                commandId: RandomJSON.string(&generator), correlationId: RandomJSON.string(&generator),
                causationId: RandomJSON.string(&generator)),
            recordedAt: generator.chance(30)
                ? generator.pick(instants)
                : Int64.random(in: -100_000_000_000_000...300_000_000_000_000, using: &generator))
    }

    /// The same outcome both ways: equal bytes, or the same error.
    static func expectSame(_ event: RecordedEvent, sourceLocation: SourceLocation = #_sourceLocation) {
        let slow = Result { () throws(EventDecodingError) in JSONWriter.bytes(try WireEncoding.envelope(event)) }
        let fast = Result { () throws(EventDecodingError) in try EnvelopeWriter.bytes(event) }
        switch (slow, fast) {
        case (.success(let expected), .success(let actual)):
            #expect(actual == expected, "\(event)", sourceLocation: sourceLocation)
        case (.failure(let expected), .failure(let actual)):
            #expect(actual == expected, sourceLocation: sourceLocation)
        default:
            Issue.record("slow \(slow) but fast \(fast) for \(event)", sourceLocation: sourceLocation)
        }
    }

    @Test("payloads the codec writes, random canonical objects, and every kind of timestamp")
    func canonicalPayloads() {
        var generator = SeededGenerator(seed: 2026)
        for sample in SampleEvents.all {
            Self.expectSame(Self.randomEvent(&generator, data: EventCodec.encodedText(sample)))
        }
        for _ in 0..<2_000 {
            let data = JSONWriter.string(.object(RandomJSON.object(&generator, depth: 3)))
            Self.expectSame(Self.randomEvent(&generator, data: data))
        }
    }

    @Test("plain fields, canonical payloads and extreme numbers (written in one reservation) give the same bytes")
    func plainEnvelopes() throws {
        var generator = SeededGenerator(seed: 2027)
        let plain = Array("abcXYZ019-_:. ~/{}[]@#$%^&*()+=|<>?!`'".utf8)
        func text() -> String {
            String(
                decoding: (0..<Int.random(in: 0...40, using: &generator)).map { _ in generator.pick(plain) },
                as: UTF8.self)
        }
        let integers: [Int64] = [0, 1, -1, 9, 10, .max, .min, .max - 1, .min + 1, 1_000_000, -999]
        var output: [UInt8] = Array("earlier bytes".utf8)
        for round in 0..<1_000 {
            let event = RecordedEvent(
                position: generator.chance(30)
                    ? generator.pick(integers) : Int64.random(in: .min ... .max, using: &generator),
                eventId: text(), stream: text(),
                version: Int(
                    generator.chance(30) ? generator.pick(integers) : Int64.random(in: .min ... .max, using: &generator)
                ),
                type: text(), data: JSONWriter.string(.object(RandomJSON.object(&generator, depth: 2))),
                metadata: EventMetadata(commandId: text(), correlationId: text(), causationId: text()),
                recordedAt: Int64.random(in: -62_167_219_200_000...253_402_300_799_999, using: &generator))
            Self.expectSame(event)
            // Appended after other bytes, into a buffer that grows now and then.
            let before = output
            try? EnvelopeWriter.write(event, into: &output)
            #expect(output == before + (try EnvelopeWriter.bytes(event)), "round \(round)")
            if output.count > 8_000 { output.removeAll(keepingCapacity: round % 2 == 0) }
        }
    }

    @Test("payloads in another form are written again; payloads that are not JSON are refused alike")
    func otherPayloads() {
        var generator = SeededGenerator(seed: 99)
        let payloads = [
            #"{ "a" : 1 }"#, #"{"a":"\u0041\/"}"#, #"{"a":1.50,"b":1e2,"c":-0}"#, "[1, 2]", #""text""#, "12",
            #"{"a":1,"a":2}"#, "{", "", "not json", #"{"a":"\x"}"#, "1 2", "{\"a\":\"\u{1}\"}",
        ]
        for payload in payloads {
            Self.expectSame(Self.randomEvent(&generator, data: payload))
        }
    }

    @Test("a ReadLog reply written as bytes equals the JSONValue reply, unreadable events included")
    func replies() throws {
        var generator = SeededGenerator(seed: 5)
        var events = (1...50).map { _ in
            Self.randomEvent(&generator, data: JSONWriter.string(.object(RandomJSON.object(&generator))))
        }
        for id in ["r-1", "quote\"and\\slash", "é😀"] {
            for page in [
                LogPage(events: events, next: 51, head: 60), LogPage(events: [], next: 7, head: 6),
            ] {
                #expect(
                    LogReader.replyBytes(id: id, page) == JSONWriter.bytes(LogReader.reply(id: id, page)))
            }
        }
        events[10].data = "{broken"
        let page = LogPage(events: events, next: 51, head: 60)
        let reply = LogReader.replyBytes(id: "r-2", page)
        #expect(reply == JSONWriter.bytes(LogReader.reply(id: "r-2", page)))
        #expect(try JSONParser.parse(reply).objectValue?["ok"] == .bool(false))
    }
}

/// The promise the envelope fast path counts on, checked where payloads are made: what
/// `EventCodec` writes (and so what the log stores) is in canonical form, whatever the text.
@Suite("Stored payloads are canonical")
struct StoredPayloadsAreCanonicalTests {
    @Test("every payload the codec writes, with any text in its fields, is copied as it is")
    func codecOutputIsCanonical() throws {
        var generator = SeededGenerator(seed: 12)
        for sample in SampleEvents.all {
            #expect(JSONCanonicalForm.isCanonical(EventCodec.encodedText(sample)), "\(sample)")
        }
        for _ in 0..<500 {
            let content = try PostContent(RandomJSON.string(&generator, maximumLength: 60))
            let event = DomainEvent.post(.edited(PostEdited(postId: try PostId("p1"), content: content)))
            #expect(JSONCanonicalForm.isCanonical(EventCodec.encodedText(event)))
        }
    }
}

/// The worker's command replies, written as bytes, must equal the `JSONValue` replies.
@Suite("Command reply bytes")
struct CommandReplyBytesTests {
    @Test("accepted and rejected outcomes, with envelopes written before or not, give the same bytes")
    func sameBytes() {
        var generator = SeededGenerator(seed: 77)
        for round in 0..<300 {
            let events = (0..<Int.random(in: 0...4, using: &generator)).map { _ in
                EnvelopeWriterTests.randomEvent(
                    &generator,
                    data: generator.chance(90)
                        ? JSONWriter.string(.object(RandomJSON.object(&generator, depth: 2))) : "not json")
            }
            let outcome: CommandOutcome =
                generator.chance(20)
                ? .rejected(ServiceError(.notFound, "no such thing \(round)", details: [("id", .string("x\(round)"))]))
                : .accepted(
                    CommandAccepted(
                        position: Int64.random(in: 0...1_000_000, using: &generator), events: events,
                        wasRetry: generator.chance(10)))
            var written: [Int64: [UInt8]] = [:]
            var writtenValues: [Int64: JSONValue] = [:]
            for event in events where generator.chance(50) {
                written[event.position] = try? EnvelopeWriter.bytes(event)
                writtenValues[event.position] = try? WireEncoding.envelope(event)
            }
            let id = RandomJSON.string(&generator)
            #expect(
                WireEncoding.commandReplyBytes(id: id, outcome, envelopes: written)
                    == JSONWriter.bytes(WireEncoding.commandReply(id: id, outcome, envelopes: writtenValues)),
                "round \(round)")
        }
    }
}
