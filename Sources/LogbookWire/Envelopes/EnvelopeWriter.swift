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
        let start = output.count
        output.append(contentsOf: Literal.eventIdKey)
        JSONWriter.writeString(utf8: event.eventId, into: &output)
        output.append(contentsOf: Literal.positionKey)
        JSONWriter.writeInteger(Int(event.position), into: &output)
        output.append(contentsOf: Literal.streamKey)
        JSONWriter.writeString(utf8: event.stream, into: &output)
        output.append(contentsOf: Literal.versionKey)
        JSONWriter.writeInteger(event.version, into: &output)
        output.append(contentsOf: Literal.typeKey)
        JSONWriter.writeString(utf8: event.type, into: &output)
        output.append(contentsOf: Literal.dataKey)
        do {
            try writeData(event, into: &output)
        } catch {
            output.removeSubrange(start...)
            throw error
        }
        output.append(contentsOf: Literal.commandIdKey)
        JSONWriter.writeString(utf8: event.commandId, into: &output)
        output.append(contentsOf: Literal.correlationIdKey)
        JSONWriter.writeString(utf8: event.correlationId, into: &output)
        output.append(contentsOf: Literal.causationIdKey)
        JSONWriter.writeString(utf8: event.causationId, into: &output)
        output.append(contentsOf: Literal.recordedAtKey)
        RFC3339Writer.write(millisecondsSinceEpoch: event.recordedAt, into: &output)
        output.append(contentsOf: Literal.closing)
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

/// The fixed parts of an envelope, as bytes once (appending a byte array is one copy).
private enum Literal {
    static let eventIdKey: [UInt8] = Array(#"{"eventId":"#.utf8)
    static let positionKey: [UInt8] = Array(#","position":"#.utf8)
    static let streamKey: [UInt8] = Array(#","stream":"#.utf8)
    static let versionKey: [UInt8] = Array(#","version":"#.utf8)
    static let typeKey: [UInt8] = Array(#","type":"#.utf8)
    static let dataKey: [UInt8] = Array(#","data":"#.utf8)
    static let commandIdKey: [UInt8] = Array(#","metadata":{"commandId":"#.utf8)
    static let correlationIdKey: [UInt8] = Array(#","correlationId":"#.utf8)
    static let causationIdKey: [UInt8] = Array(#","causationId":"#.utf8)
    static let recordedAtKey: [UInt8] = Array(#"},"recordedAt":""#.utf8)
    static let closing: [UInt8] = Array(#""}"#.utf8)
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
        let year = date.year
        twoDigits(year / 100, &output)
        twoDigits(year % 100, &output)
        output.append(UInt8(ascii: "-"))
        twoDigits(date.month, &output)
        output.append(UInt8(ascii: "-"))
        twoDigits(date.day, &output)
        output.append(UInt8(ascii: "T"))
        twoDigits(second / 3600, &output)
        output.append(UInt8(ascii: ":"))
        twoDigits(second / 60 % 60, &output)
        output.append(UInt8(ascii: ":"))
        twoDigits(second % 60, &output)
        output.append(UInt8(ascii: "."))
        let millisecond = millisecondOfDay % 1000
        output.append(UInt8(ascii: "0") + UInt8(millisecond / 100))
        twoDigits(millisecond % 100, &output)
        output.append(UInt8(ascii: "Z"))
    }

    /// `value` (0–99) in two digits.
    private static func twoDigits(_ value: Int, _ output: inout [UInt8]) {
        output.append(UInt8(ascii: "0") + UInt8(value / 10))
        output.append(UInt8(ascii: "0") + UInt8(value % 10))
    }
}

extension Int64 {
    /// The remainder with the divisor's sign (the divisor here is positive).
    fileprivate func floorModulo(_ divisor: Int64) -> Int64 {
        let remainder = self % divisor
        return remainder < 0 ? remainder + divisor : remainder
    }
}
