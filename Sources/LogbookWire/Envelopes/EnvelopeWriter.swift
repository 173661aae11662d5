public import LogbookApplication
import LogbookDomain
import LogbookJSON

/// Writes event envelopes straight into a byte buffer: the same bytes as
/// `JSONWriter.write(WireEncoding.envelope(event))`, without building a `JSONValue`.
///
/// The stored payload is copied as it is when it is already in the form `JSONWriter`
/// writes (`JSONCanonicalForm`), which is what every payload in the log is: the log
/// stores only what `EventCodec` wrote, and an upcast payload is written by `JSONWriter`
/// too. Anything else (a damaged or foreign log) is parsed and written again, or refused,
/// exactly as `WireEncoding.envelope` does, so the bytes never depend on that promise.
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
        // Each string field sits between the closing quote of the fixed text before it and
        // the opening quote of the one after: few appends, each of one run of bytes.
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
        do {
            try writeData(event, into: &output)
        } catch {
            output.removeSubrange(start...)
            throw error
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

    /// The envelope of `event` as bytes.
    public static func bytes(_ event: RecordedEvent) throws(EventDecodingError) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(event.data.utf8.count + LogReader.envelopeOverhead)
        try write(event, into: &output)
        return output
    }

    /// Copies a canonical payload as it is (one scan, then one copy); parses and writes
    /// anything else again, or refuses what is not JSON. Bytes that are not UTF-8 are never
    /// canonical, and are repaired before the parse, as a `String` made from them would be.
    private static func writeData(_ event: StoredEventBytes, into output: inout [UInt8]) throws(EventDecodingError) {
        if JSONCanonicalForm.isCanonical(event.data) {
            output.append(contentsOf: event.data)
            return
        }
        do {
            JSONWriter.write(try JSONParser.parse(StoredEventBytes.text(event.data)), into: &output)
        } catch {
            throw EventDecodingError(
                type: StoredEventBytes.text(event.type), reason: "payload is not JSON: \(error)")
        }
    }
}

/// `Timestamp.rfc3339` (`YYYY-MM-DDTHH:MM:SS.mmmZ`) written as bytes without building strings.
enum RFC3339Writer {
    static func write(millisecondsSinceEpoch: Int64, into output: inout [UInt8]) {
        let timestamp = Timestamp(millisecondsSinceEpoch: millisecondsSinceEpoch)
        let date = timestamp.utcDate
        // Years outside 0–9999 have no fixed width: the general formatter handles them.
        guard (0...9999).contains(date.year) else {
            output.append(contentsOf: timestamp.rfc3339.utf8)
            return
        }
        let millisecondOfDay = Int(millisecondsSinceEpoch.floorModulo(86_400_000))
        let second = millisecondOfDay / 1000
        let millisecond = millisecondOfDay % 1000
        // Formed in 24 bytes on the stack, then appended at once.
        var text: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &text) { bytes in
            twoDigits(date.year / 100, bytes, 0)
            twoDigits(date.year % 100, bytes, 2)
            bytes[4] = UInt8(ascii: "-")
            twoDigits(date.month, bytes, 5)
            bytes[7] = UInt8(ascii: "-")
            twoDigits(date.day, bytes, 8)
            bytes[10] = UInt8(ascii: "T")
            twoDigits(second / 3600, bytes, 11)
            bytes[13] = UInt8(ascii: ":")
            twoDigits(second / 60 % 60, bytes, 14)
            bytes[16] = UInt8(ascii: ":")
            twoDigits(second % 60, bytes, 17)
            bytes[19] = UInt8(ascii: ".")
            bytes[20] = UInt8(ascii: "0") + UInt8(millisecond / 100)
            twoDigits(millisecond % 100, bytes, 21)
            bytes[23] = UInt8(ascii: "Z")
            output.append(contentsOf: UnsafeRawBufferPointer(bytes))
        }
    }

    /// `value` (0–99) in two digits at `offset`.
    private static func twoDigits(_ value: Int, _ bytes: UnsafeMutableRawBufferPointer, _ offset: Int) {
        bytes[offset] = UInt8(ascii: "0") + UInt8(value / 10)
        bytes[offset + 1] = UInt8(ascii: "0") + UInt8(value % 10)
    }
}

extension Int64 {
    /// The remainder with the divisor's sign (the divisor here is positive).
    fileprivate func floorModulo(_ divisor: Int64) -> Int64 {
        let remainder = self % divisor
        return remainder < 0 ? remainder + divisor : remainder
    }
}
