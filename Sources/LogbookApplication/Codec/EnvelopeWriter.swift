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
        let start = output.count
        output.append(contentsOf: #"{"eventId":"#.utf8)
        JSONWriter.writeString(event.eventId, into: &output)
        output.append(contentsOf: #","position":"#.utf8)
        JSONWriter.writeInteger(Int(event.position), into: &output)
        output.append(contentsOf: #","stream":"#.utf8)
        JSONWriter.writeString(event.stream, into: &output)
        output.append(contentsOf: #","version":"#.utf8)
        JSONWriter.writeInteger(event.version, into: &output)
        output.append(contentsOf: #","type":"#.utf8)
        JSONWriter.writeString(event.type, into: &output)
        output.append(contentsOf: #","data":"#.utf8)
        do {
            try writeData(event, into: &output)
        } catch {
            output.removeSubrange(start...)
            throw error
        }
        output.append(contentsOf: #","metadata":{"commandId":"#.utf8)
        JSONWriter.writeString(event.metadata.commandId, into: &output)
        output.append(contentsOf: #","correlationId":"#.utf8)
        JSONWriter.writeString(event.metadata.correlationId, into: &output)
        output.append(contentsOf: #","causationId":"#.utf8)
        JSONWriter.writeString(event.metadata.causationId, into: &output)
        output.append(contentsOf: #"},"recordedAt":""#.utf8)
        RFC3339Writer.write(millisecondsSinceEpoch: event.recordedAt, into: &output)
        output.append(contentsOf: #""}"#.utf8)
    }

    /// The envelope of `event` as bytes.
    public static func bytes(_ event: RecordedEvent) throws(EventDecodingError) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(event.data.utf8.count + LogReader.envelopeOverhead)
        try write(event, into: &output)
        return output
    }

    private static func writeData(_ event: RecordedEvent, into output: inout [UInt8]) throws(EventDecodingError) {
        var data = event.data
        let spliced = data.withUTF8 { bytes in
            guard JSONCanonicalForm.isCanonical(bytes) else { return false }
            output.append(contentsOf: bytes)
            return true
        }
        if spliced { return }
        do {
            JSONWriter.write(try JSONParser.parse(event.data), into: &output)
        } catch {
            throw EventDecodingError(type: event.type, reason: "payload is not JSON: \(error)")
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
        digits(date.year, 4, &output)
        output.append(UInt8(ascii: "-"))
        digits(date.month, 2, &output)
        output.append(UInt8(ascii: "-"))
        digits(date.day, 2, &output)
        output.append(UInt8(ascii: "T"))
        digits(second / 3600, 2, &output)
        output.append(UInt8(ascii: ":"))
        digits(second / 60 % 60, 2, &output)
        output.append(UInt8(ascii: ":"))
        digits(second % 60, 2, &output)
        output.append(UInt8(ascii: "."))
        digits(millisecondOfDay % 1000, 3, &output)
        output.append(UInt8(ascii: "Z"))
    }

    /// `value` (non-negative, below 10^width) in exactly `width` digits.
    private static func digits(_ value: Int, _ width: Int, _ output: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            output.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }
}

extension Int64 {
    /// The remainder with the divisor's sign (the divisor here is positive).
    fileprivate func floorModulo(_ divisor: Int64) -> Int64 {
        let remainder = self % divisor
        return remainder < 0 ? remainder + divisor : remainder
    }
}
