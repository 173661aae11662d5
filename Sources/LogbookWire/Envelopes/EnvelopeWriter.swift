public import LogbookApplication
import LogbookJSON

/// Writes event envelopes straight into a byte buffer: the same bytes as
/// `JSONWriter.write(WireEncoding.envelope(event))`, without building a `JSONValue`.
///
/// The stored payload is copied as it is when it is already in the form `JSONWriter`
/// writes (`JSONCanonicalForm`), which is what every payload in the log is: the log
/// stores only what `EventCodec` wrote, and an upcast payload is written by `JSONWriter`
/// too. Anything else (a damaged or foreign log) is parsed and written again, or refused,
/// exactly as `WireEncoding.envelope` does, so the bytes never depend on that promise.
///
/// The usual envelope (string fields of printable ASCII without quotes or backslashes, a
/// canonical payload, a timestamp in years 0–9999) is written in one reservation of the
/// output, copying each run of bytes with no check in between (`EnvelopeLayout`); any
/// other goes field by field through `JSONWriter`.
public enum EnvelopeWriter {
    /// Appends the envelope of `event` to `output`. Throws, leaving `output` as it was, when
    /// the stored `data` is not JSON.
    public static func write(_ event: RecordedEvent, into output: inout [UInt8]) throws(EventDecodingError) {
        try StoredEventBytes.withBytes(of: event) { (bytes) throws(EventDecodingError) in
            try write(bytes, into: &output)
        }
    }

    /// Appends the envelope of an event read as bytes (a `ReadLog` page written straight
    /// from the store's rows): the same bytes as for its `recordedEvent`. Throws, leaving
    /// `output` as it was, when the stored `data` is not JSON.
    public static func write(_ event: StoredEventBytes, into output: inout [UInt8]) throws(EventDecodingError) {
        let canonical = JSONCanonicalForm.isCanonical(event.data)
        if canonical, let layout = EnvelopeLayout(event) {
            layout.write(event, into: &output)
        } else {
            try writeFieldByField(event, dataIsCanonical: canonical, into: &output)
        }
    }

    /// The envelope of `event` as bytes.
    public static func bytes(_ event: RecordedEvent) throws(EventDecodingError) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(event.data.utf8.count + LogReader.envelopeOverhead)
        try write(event, into: &output)
        return output
    }

    /// Any envelope: each string field escaped (and repaired) as `JSONWriter` does, a payload
    /// that is not canonical parsed and written again.
    private static func writeFieldByField(
        _ event: StoredEventBytes, dataIsCanonical: Bool, into output: inout [UInt8]
    ) throws(EventDecodingError) {
        // Each string field sits between the closing quote of the fixed text before it and
        // the opening quote of the one after.
        let start = output.count
        append(#"{"eventId":""#, to: &output)
        JSONWriter.writeStringContent(utf8: event.eventId, into: &output)
        append(#"","position":"#, to: &output)
        JSONWriter.writeInteger(Int(event.position), into: &output)
        append(#","stream":""#, to: &output)
        JSONWriter.writeStringContent(utf8: event.stream, into: &output)
        append(#"","version":"#, to: &output)
        JSONWriter.writeInteger(event.version, into: &output)
        append(#","type":""#, to: &output)
        JSONWriter.writeStringContent(utf8: event.type, into: &output)
        append(#"","data":"#, to: &output)
        if dataIsCanonical {
            output.append(contentsOf: event.data)
        } else {
            do {
                JSONWriter.write(try JSONParser.parse(StoredEventBytes.text(event.data)), into: &output)
            } catch {
                output.removeSubrange(start...)
                throw EventDecodingError(
                    type: StoredEventBytes.text(event.type), reason: "payload is not JSON: \(error)")
            }
        }
        append(#","metadata":{"commandId":""#, to: &output)
        JSONWriter.writeStringContent(utf8: event.commandId, into: &output)
        append(#"","correlationId":""#, to: &output)
        JSONWriter.writeStringContent(utf8: event.correlationId, into: &output)
        append(#"","causationId":""#, to: &output)
        JSONWriter.writeStringContent(utf8: event.causationId, into: &output)
        append(#""},"recordedAt":""#, to: &output)
        RFC3339Writer.write(millisecondsSinceEpoch: event.recordedAt, into: &output)
        append(#""}"#, to: &output)
    }

    /// Appends fixed text (no array to retain, no lazy global to check).
    @inline(__always)
    private static func append(_ text: StaticString, to output: inout [UInt8]) {
        output.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }
}
