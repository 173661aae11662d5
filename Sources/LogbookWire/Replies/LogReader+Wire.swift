public import LogbookApplication
public import LogbookJSON

/// The `ReadLog` reply, as a document and written straight as bytes.
extension LogReader {
    /// The reply `{"id","ok":true,"events":[…],"next","head"}`.
    public static func reply(id: String, _ page: LogPage) -> JSONValue {
        var envelopes: [JSONValue] = []
        envelopes.reserveCapacity(page.events.count)
        for event in page.events {
            do {
                envelopes.append(try WireEncoding.envelope(event))
            } catch {
                return WireEncoding.failure(id: id, .unreadable(error))
            }
        }
        return WireEncoding.success(
            id: id, ["events": .array(envelopes), "next": .int(Int(page.next)), "head": .int(Int(page.head))])
    }

    /// The same reply written straight as bytes: `JSONWriter.bytes(reply(id:page))`, byte for
    /// byte, with each envelope written by `EnvelopeWriter` into one buffer.
    public static func replyBytes(id: String, _ page: LogPage) -> [UInt8] {
        var output: [UInt8] = []
        writeReply(id: id, page, into: &output)
        return output
    }

    /// Replaces the contents of `output` with the reply of `replyBytes`; a caller that
    /// answers many reads keeps one buffer and its capacity.
    public static func writeReply(id: String, _ page: LogPage, into output: inout [UInt8]) {
        output.removeAll(keepingCapacity: true)
        output.reserveCapacity(page.events.reduce(64) { $0 + $1.data.utf8.count + envelopeOverhead })
        output.append(contentsOf: #"{"id":"#.utf8)
        JSONWriter.writeString(id, into: &output)
        output.append(contentsOf: #","ok":true,"events":["#.utf8)
        for (index, event) in page.events.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            do {
                try EnvelopeWriter.write(event, into: &output)
            } catch {
                output.removeAll(keepingCapacity: true)
                JSONWriter.write(WireEncoding.failure(id: id, .unreadable(error)), into: &output)
                return
            }
        }
        output.append(contentsOf: #"],"next":"#.utf8)
        JSONWriter.writeInteger(Int(page.next), into: &output)
        output.append(contentsOf: #","head":"#.utf8)
        JSONWriter.writeInteger(Int(page.head), into: &output)
        output.append(UInt8(ascii: "}"))
    }
}
