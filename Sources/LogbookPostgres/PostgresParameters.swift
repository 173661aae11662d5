import LogbookApplication

/// Parameters as the text PostgreSQL reads. A batch becomes `logbook_append`'s one
/// parameter, the JSON array the function reads (see `PostgresSchema.append`). Strings are
/// escaped, never altered, so an event's `data` arrives in the `events` table byte for byte
/// as it was given. Expectations and dependencies are listed in the order
/// `AppendRequest.refusal` checks them (sorted the Swift way), so the function reports the
/// same first refusal as every other store.
enum PostgresParameters {
    static func batch(_ batch: [AppendRequest], evolution: EventEvolution) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(batch.reduce(64) { $0 + 128 + $1.events.reduce(0) { $0 + 96 + $1.data.utf8.count } })
        out.append(UInt8(ascii: "["))
        for (index, request) in batch.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "["))
            string(request.commandId, into: &out)
            out.append(UInt8(ascii: ","))
            string(request.metadata.correlationId, into: &out)
            out.append(UInt8(ascii: ","))
            string(request.metadata.causationId, into: &out)
            out.append(UInt8(ascii: ","))
            if let answer = request.answer { string(answer, into: &out) } else { out += Array("null".utf8) }
            out += Array(",[".utf8)
            for (offset, expectation) in request.expectations.sorted(by: { $0.key < $1.key }).enumerated() {
                if offset > 0 { out.append(UInt8(ascii: ",")) }
                out.append(UInt8(ascii: "["))
                string(expectation.key, into: &out)
                out += Array(",\(code(expectation.value))]".utf8)
            }
            out += Array("],[".utf8)
            for (offset, dependency) in request.dependencies.sorted().enumerated() {
                if offset > 0 { out.append(UInt8(ascii: ",")) }
                string(dependency, into: &out)
            }
            out += Array("],[".utf8)
            for (offset, event) in request.events.enumerated() {
                if offset > 0 { out.append(UInt8(ascii: ",")) }
                out.append(UInt8(ascii: "["))
                for field in [
                    event.eventId, event.stream, RecordedEvent.category(ofStream: event.stream), event.type, event.data,
                ] {
                    string(field, into: &out)
                    out.append(UInt8(ascii: ","))
                }
                out += Array("\(event.recordedAt),\(evolution.currentVersion(of: event.type))]".utf8)
            }
            out += Array("]]".utf8)
        }
        out.append(UInt8(ascii: "]"))
        return String(decoding: out, as: UTF8.self)
    }

    /// -1 for any, 0 for no stream, n for exactly n.
    private static func code(_ expected: ExpectedVersion) -> Int {
        switch expected {
        case .any: -1
        case .noStream: 0
        case .exactly(let version): version
        }
    }

    private static let hex = Array("0123456789abcdef".utf8)

    /// `text` as a JSON string: quotes, backslashes and control characters escaped, the rest as it is.
    static func string(_ text: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                out.append(UInt8(ascii: "\\"))
                out.append(byte)
            case 0..<0x20:
                out += Array("\\u00".utf8)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0xF)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// `values` as a PostgreSQL array literal of text (`{"a","b"}`), for a `$n::text[]` parameter.
    static func textArray(_ values: [String]) -> String {
        var out: [UInt8] = [UInt8(ascii: "{")]
        for (offset, value) in values.enumerated() {
            if offset > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "\""))
            for byte in value.utf8 {
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { out.append(UInt8(ascii: "\\")) }
                out.append(byte)
            }
            out.append(UInt8(ascii: "\""))
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    /// `values` as a PostgreSQL array literal of text in which nil is NULL (`{"a",NULL}`).
    static func nullableTextArray(_ values: [String?]) -> String {
        var out: [UInt8] = [UInt8(ascii: "{")]
        for (offset, value) in values.enumerated() {
            if offset > 0 { out.append(UInt8(ascii: ",")) }
            guard let value else {
                out += Array("NULL".utf8)
                continue
            }
            out.append(UInt8(ascii: "\""))
            for byte in value.utf8 {
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { out.append(UInt8(ascii: "\\")) }
                out.append(byte)
            }
            out.append(UInt8(ascii: "\""))
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    /// `values` as a PostgreSQL array literal of integers in which nil is NULL (`{1,NULL,3}`),
    /// for a `$n::bigint[]` or `$n::integer[]` parameter.
    static func integerArray(_ values: [Int64?]) -> String {
        "{" + values.map { $0.map(String.init) ?? "NULL" }.joined(separator: ",") + "}"
    }

    /// `values` as a PostgreSQL array literal of booleans (`{t,f}`).
    static func booleanArray(_ values: [Bool]) -> String {
        "{" + values.map { $0 ? "t" : "f" }.joined(separator: ",") + "}"
    }

    /// Each of `values` as hexadecimal text in a PostgreSQL array literal (`{"00ff",""}`), for
    /// a `$n::text[]` parameter whose elements `decode(…, 'hex')` turns back into bytes.
    static func hexArray(_ values: [[UInt8]]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(values.reduce(2) { $0 + 3 + 2 * $1.count })
        out.append(UInt8(ascii: "{"))
        for (offset, value) in values.enumerated() {
            if offset > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "\""))
            for byte in value {
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0xF)])
            }
            out.append(UInt8(ascii: "\""))
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes that hexadecimal text (as `encode(…, 'hex')` writes it) stands for; nil when
    /// it is not hexadecimal.
    static func bytes(fromHex text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard text.count % 2 == 0 else { return nil }
        func nibble(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count / 2)
        var index = 0
        while index < text.count {
            guard let high = nibble(text[index]), let low = nibble(text[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }
}
