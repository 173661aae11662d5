import LogbookApplication
import LogbookJSON

/// Reads a `ReadLog` reply in the worker's exact form (the form `LogPageReader` reads) into
/// an `EncodedLogPage`: every envelope is walked and checked as `LogPageReader` checks it
/// (canonical strings, a canonical payload object, positions and versions ≥ 1, a valid
/// time), but its fields are only located, not copied into `String`s. The reply's bytes
/// become the page's own, without a copy.
///
/// It answers nil for exactly the replies `LogPageReader.page` answers nil for (another
/// form, an error reply, a value the general path would refuse), and the caller then takes
/// the general path, which gives the page or says what is wrong.
public enum EncodedLogPageReader {
    /// The reply's `id` and page, or nil when the reply is not in the writer's exact form.
    public static func page(_ reply: [UInt8]) -> (id: String, page: EncodedLogPage)? {
        // Offsets are kept as 32-bit numbers; no frame is that large (`FrameLimit`).
        guard reply.count < Int(Int32.max) else { return nil }
        let read = reply.withUnsafeBufferPointer { bytes in
            var cursor = CanonicalCursor(bytes: bytes)
            return cursor.reply(envelope: { $0.encodedEnvelope() })
        }
        guard let (id, events, next, head) = read else { return nil }
        return EncodedLogPage(bytes: reply, events: events, next: next, head: head).map { (id, $0) }
    }
}

extension CanonicalCursor {
    /// One envelope in `EnvelopeWriter`'s layout, located.
    fileprivate mutating func encodedEnvelope() -> EncodedLogPage.Event? {
        guard take(#"{"eventId":"#), let eventId = skipString(), take(#","position":"#), let position = integer(),
            position >= 1, take(#","stream":"#), let stream = skipString(), take(#","version":"#),
            let version = integer(), version >= 1, take(#","type":"#), let type = skipString(), take(#","data":"#),
            index < bytes.count, bytes[index] == UInt8(ascii: "{"),
            let dataEnd = JSONCanonicalForm.valueEnd(in: bytes, from: index)
        else { return nil }
        let data = Int32(index)..<Int32(dataEnd)
        index = dataEnd
        guard take(#","metadata":{"commandId":"#), let commandId = skipString(), take(#","correlationId":"#),
            let correlationId = skipString(), take(#","causationId":"#), let causationId = skipString(),
            take(#"},"recordedAt":"#), let recordedAt = instant(), take("}")
        else { return nil }
        return EncodedLogPage.Event(
            position: Int64(position), version: version, recordedAt: recordedAt,
            stream: (stream.lowerBound + 1)..<(stream.upperBound - 1),
            type: (type.lowerBound + 1)..<(type.upperBound - 1),
            data: data, eventId: eventId.lowerBound, commandId: commandId.lowerBound,
            correlationId: correlationId.lowerBound, causationId: causationId.lowerBound)
    }

    /// Steps over a canonical string; its bytes, quotes included.
    private mutating func skipString() -> Range<Int32>? {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\""),
            let end = JSONCanonicalForm.stringEnd(in: bytes, from: index)
        else { return nil }
        defer { index = end }
        return Int32(index)..<Int32(end)
    }
}
