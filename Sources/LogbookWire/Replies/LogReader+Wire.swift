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
        writeReplyHead(id: id, into: &output)
        for (index, event) in page.events.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            do {
                try EnvelopeWriter.write(event, into: &output)
            } catch {
                return writeUnreadable(id: id, error, into: &output)
            }
        }
        writeReplyTail(next: page.next, head: page.head, into: &output)
    }

    /// Reads the page `request` asks for and writes its reply into `output` (replacing its
    /// contents) straight from the store's rows, with no `RecordedEvent` or `String` per
    /// event: the same bytes as `writeReply(id:read(request),into:)`, an unreadable payload
    /// included. Throws, leaving `output` unspecified, when the store cannot be read.
    /// Returns the page's bounds, or nil when the reply is the failure of an unreadable event.
    @discardableResult
    public func writeReply(id: String, reading request: LogReadRequest, into output: inout [UInt8])
        throws(ServiceError) -> LogPageBounds?
    {
        output.removeAll(keepingCapacity: true)
        Self.writeReplyHead(id: id, into: &output)
        do {
            let bounds = try appendEnvelopes(reading: request, to: &output)
            Self.writeReplyTail(next: bounds.next, head: bounds.head, into: &output)
            return bounds
        } catch {
            switch error {
            case .store(let error): throw ServiceError(error)
            case .body(let unreadable):
                Self.writeUnreadable(id: id, unreadable, into: &output)
                return nil
            }
        }
    }

    /// Reads the page `request` asks for and appends its envelopes, separated by commas, to
    /// `output`: the part of a reply between `"events":[` and `]` (a page built before it
    /// is asked for, `writeReply(id:envelopes:next:head:into:)` later puts the rest around it).
    public func appendEnvelopes(reading request: LogReadRequest, to output: inout [UInt8])
        throws(PagedReadError<EventDecodingError>) -> LogPageBounds
    {
        var written = 0
        return try read(request) { (event) throws(EventDecodingError) in
            if written > 0 { output.append(UInt8(ascii: ",")) }
            try EnvelopeWriter.write(event, into: &output)
            written += 1
        }
    }

    /// Replaces the contents of `output` with the reply to request `id` holding `envelopes`
    /// (written by `appendEnvelopes`), `next` and `head`.
    public static func writeReply(
        id: String, envelopes: [UInt8], next: Int64, head: Int64, into output: inout [UInt8]
    ) {
        output.removeAll(keepingCapacity: true)
        output.reserveCapacity(envelopes.count + 128)
        writeReplyHead(id: id, into: &output)
        output.append(contentsOf: envelopes)
        writeReplyTail(next: next, head: head, into: &output)
    }

    /// `{"id":…,"ok":true,"events":[`
    private static func writeReplyHead(id: String, into output: inout [UInt8]) {
        output.append(contentsOf: #"{"id":"#.utf8)
        JSONWriter.writeString(id, into: &output)
        output.append(contentsOf: #","ok":true,"events":["#.utf8)
    }

    /// `],"next":…,"head":…}`
    private static func writeReplyTail(next: Int64, head: Int64, into output: inout [UInt8]) {
        output.append(contentsOf: #"],"next":"#.utf8)
        JSONWriter.writeInteger(Int(next), into: &output)
        output.append(contentsOf: #","head":"#.utf8)
        JSONWriter.writeInteger(Int(head), into: &output)
        output.append(UInt8(ascii: "}"))
    }

    /// Replaces what was written with the failure a page holding an unreadable event gets.
    private static func writeUnreadable(id: String, _ error: EventDecodingError, into output: inout [UInt8]) {
        output.removeAll(keepingCapacity: true)
        JSONWriter.write(WireEncoding.failure(id: id, .unreadable(error)), into: &output)
    }
}
