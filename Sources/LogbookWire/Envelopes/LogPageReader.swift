public import LogbookApplication
import LogbookDomain
import LogbookJSON

/// Reads a `ReadLog` reply straight from its bytes when it is exactly what
/// `LogReader.replyBytes` writes (`{"id","ok":true,"events":[…],"next","head"}`, each
/// envelope as `EnvelopeWriter` writes it, every payload in canonical form), without
/// building `JSONValue`s or writing payloads again: each `data` is taken as its bytes.
///
/// It promises the same page `WireDecoding.logPage` gives for the parsed reply. For any
/// reply that differs in the least (another field order, whitespace, a value the slow path
/// would refuse, an error reply) it answers nil, and the caller takes the general path,
/// which then says what is wrong.
public enum LogPageReader {
    /// The reply's `id` and page, or nil when the reply is not in the writer's exact form.
    public static func page(_ reply: [UInt8]) -> (id: String, page: LogPage)? {
        reply.withUnsafeBufferPointer { bytes in
            var cursor = CanonicalCursor(bytes: bytes)
            return cursor.reply()
        }
    }

    /// A feed message's envelope read the same way: the event and its `previous` marks in
    /// `FeedTopic.allCases` order, or nil when the bytes are not in the publisher's exact form
    /// (the caller then parses them in general). Checks nothing about the marks' values.
    public static func feedEnvelope(_ envelope: [UInt8]) -> (event: RecordedEvent, previous: [Int64])? {
        envelope.withUnsafeBufferPointer { bytes in
            var cursor = CanonicalCursor(bytes: bytes)
            return cursor.feedEnvelope()
        }
    }
}

/// Walks a reply in the writer's layout; every step answers nil when the bytes differ.
extension CanonicalCursor {
    fileprivate mutating func reply() -> (id: String, page: LogPage)? {
        guard let (id, events, next, head) = reply(envelope: { $0.envelope() }) else { return nil }
        return (id, LogPage(events: events, next: next, head: head))
    }

    /// A reply `{"id","ok":true,"events":[…],"next","head"}` with each envelope read by
    /// `envelope`, up to the end of the bytes.
    mutating func reply<Event>(envelope: (inout CanonicalCursor) -> Event?) -> (
        id: String, events: [Event], next: Int64, head: Int64
    )? {
        guard take(#"{"id":"#), let id = string(), take(#","ok":true,"events":["#) else { return nil }
        var events: [Event] = []
        if !take("]") {
            while true {
                guard let event = envelope(&self) else { return nil }
                events.append(event)
                if take("]") { break }
                guard take(",") else { return nil }
            }
        }
        guard take(#","next":"#), let next = integer(), take(#","head":"#), let head = integer(), take("}"),
            index == bytes.count
        else { return nil }
        return (id, events, Int64(next), Int64(head))
    }

    /// One envelope; nil also for anything `WireDecoding.recordedEvent` would refuse
    /// (positions and versions below 1, a payload that is not an object, a bad time).
    fileprivate mutating func envelope() -> RecordedEvent? {
        guard let event = envelopeMembers(), take("}") else { return nil }
        return event
    }

    /// A feed message's envelope: the envelope's members, then `"previous"` with an integer
    /// for every topic in `FeedTopic.allCases` order (as `FeedPublisher` writes it), then the
    /// end of the bytes.
    fileprivate mutating func feedEnvelope() -> (event: RecordedEvent, previous: [Int64])? {
        guard let event = envelopeMembers(), take(#","previous":{"#) else { return nil }
        var previous: [Int64] = []
        previous.reserveCapacity(FeedTopic.allCases.count)
        for (offset, topic) in FeedTopic.allCases.enumerated() {
            guard offset == 0 || take(","), string() == topic.rawValue, take(":"), let mark = integer() else {
                return nil
            }
            previous.append(Int64(mark))
        }
        guard take("}}"), index == bytes.count else { return nil }
        return (event, previous)
    }

    /// An envelope's members up to `recordedAt`, without the closing brace.
    private mutating func envelopeMembers() -> RecordedEvent? {
        guard take(#"{"eventId":"#), let eventId = string(), take(#","position":"#), let position = integer(),
            position >= 1, take(#","stream":"#), let stream = string(), take(#","version":"#),
            let version = integer(), version >= 1, take(#","type":"#), let type = string(), take(#","data":"#),
            index < bytes.count, bytes[index] == UInt8(ascii: "{"),
            let dataEnd = JSONCanonicalForm.valueEnd(in: bytes, from: index)
        else { return nil }
        let data = String(decoding: UnsafeBufferPointer(rebasing: bytes[index..<dataEnd]), as: UTF8.self)
        index = dataEnd
        guard take(#","metadata":{"commandId":"#), let commandId = string(), take(#","correlationId":"#),
            let correlationId = string(), take(#","causationId":"#), let causationId = string(),
            take(#"},"recordedAt":"#), let recordedAt = instant()
        else { return nil }
        return RecordedEvent(
            position: Int64(position), eventId: eventId, stream: stream, version: version, type: type, data: data,
            metadata: EventMetadata(commandId: commandId, correlationId: correlationId, causationId: causationId),
            recordedAt: recordedAt)
    }

    /// `"YYYY-MM-DDTHH:MM:SS.mmmZ"` read straight from the bytes: exactly what
    /// `Timestamp(rfc3339:)` accepts (a real date, hours below 24, minutes and seconds
    /// below 60), in milliseconds since the epoch.
    mutating func instant() -> Int64? {
        guard index + 26 <= bytes.count, bytes[index] == UInt8(ascii: "\""), bytes[index + 25] == UInt8(ascii: "\"")
        else { return nil }
        let start = index + 1
        func number(_ offset: Int, _ count: Int) -> Int64? {
            var value: Int64 = 0
            for byte in bytes[(start + offset)..<(start + offset + count)] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            return value
        }
        func separator(_ offset: Int, _ ascii: Unicode.Scalar) -> Bool { bytes[start + offset] == UInt8(ascii: ascii) }
        guard separator(4, "-"), separator(7, "-"), separator(10, "T"), separator(13, ":"), separator(16, ":"),
            separator(19, "."), separator(23, "Z"), let year = number(0, 4), let month = number(5, 2),
            let day = number(8, 2), let hours = number(11, 2), hours < 24, let minutes = number(14, 2), minutes < 60,
            let seconds = number(17, 2), seconds < 60, let milliseconds = number(20, 3),
            let date = CalendarDate(year: Int(year), month: Int(month), day: Int(day))
        else { return nil }
        index += 26
        let secondOfDay = (hours * 60 + minutes) * 60 + seconds
        return (date.daysSinceEpoch * 86_400 + secondOfDay) * 1000 + milliseconds
    }
}
