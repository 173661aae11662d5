import LogbookApplication
import LogbookJSON

/// The usual envelope, written in one go: every string field is plain ASCII (`JSONWriter`
/// writes it as it is), the payload canonical (copied as it is) and the timestamp of fixed
/// width, so the envelope's length is known within a few bytes before it is written. The
/// output grows once (`append(addingCapacity:)`) and every run of bytes is copied into it
/// with no check in between. The bytes are those `EnvelopeWriter`'s field-by-field path
/// writes for the same event.
struct EnvelopeLayout {
    private let timestamp: RFC3339Writer.FixedWidth
    private let length: Int

    /// The fixed text of an envelope, all of it.
    private static let fixedLength =
        [
            #"{"eventId":""#, #"","position":"#, #","stream":""#, #"","version":"#, #","type":""#, #"","data":"#,
            #","metadata":{"commandId":""#, #"","correlationId":""#, #"","causationId":""#, #""},"recordedAt":""#,
            #""}"#,
        ].reduce(0) { $0 + $1.utf8.count }

    /// Nil when `event` needs the field-by-field path: a string field to escape or repair,
    /// or a year outside 0–9999. The payload's form is the caller's to check.
    init?(_ event: StoredEventBytes) {
        guard PlainASCII.isPlain(event.eventId), PlainASCII.isPlain(event.stream), PlainASCII.isPlain(event.type),
            PlainASCII.isPlain(event.commandId), PlainASCII.isPlain(event.correlationId),
            PlainASCII.isPlain(event.causationId),
            let timestamp = RFC3339Writer.FixedWidth(millisecondsSinceEpoch: event.recordedAt)
        else { return nil }
        self.timestamp = timestamp
        length =
            Self.fixedLength + event.eventId.count + event.stream.count + event.type.count + event.data.count
            + event.commandId.count + event.correlationId.count + event.causationId.count
            + 2 * JSONWriter.maximumIntegerLength + RFC3339Writer.FixedWidth.length
    }

    /// Appends the envelope of `event` (the event this layout was made for).
    func write(_ event: StoredEventBytes, into output: inout [UInt8]) {
        output.append(addingCapacity: length) { span in
            span.withUnsafeMutableBufferPointer { buffer, count in
                var cursor = Cursor(at: buffer.baseAddress.unsafelyUnwrapped + count)
                cursor.put(#"{"eventId":""#)
                cursor.put(event.eventId)
                cursor.put(#"","position":"#)
                cursor.put(Int(event.position))
                cursor.put(#","stream":""#)
                cursor.put(event.stream)
                cursor.put(#"","version":"#)
                cursor.put(event.version)
                cursor.put(#","type":""#)
                cursor.put(event.type)
                cursor.put(#"","data":"#)
                cursor.put(event.data)
                cursor.put(#","metadata":{"commandId":""#)
                cursor.put(event.commandId)
                cursor.put(#"","correlationId":""#)
                cursor.put(event.correlationId)
                cursor.put(#"","causationId":""#)
                cursor.put(event.causationId)
                cursor.put(#""},"recordedAt":""#)
                timestamp.withText { cursor.put($0) }
                cursor.put(#""}"#)
                count = cursor.address - buffer.baseAddress.unsafelyUnwrapped
            }
        }
    }

    /// Where the next byte goes, in memory reserved for all of them.
    private struct Cursor {
        var address: UnsafeMutablePointer<UInt8>

        init(at address: UnsafeMutablePointer<UInt8>) { self.address = address }

        @inline(__always)
        mutating func put(_ text: StaticString) {
            address.update(from: text.utf8Start, count: text.utf8CodeUnitCount)
            address += text.utf8CodeUnitCount
        }

        @inline(__always)
        mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
            guard let source = bytes.baseAddress else { return }
            address.update(from: source, count: bytes.count)
            address += bytes.count
        }

        @inline(__always)
        mutating func put(_ bytes: UnsafeRawBufferPointer) {
            put(bytes.assumingMemoryBound(to: UInt8.self))
        }

        @inline(__always)
        mutating func put(_ integer: Int) {
            JSONWriter.withDecimal(integer) { put($0) }
        }
    }
}
