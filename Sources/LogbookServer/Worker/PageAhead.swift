import LogbookApplication
import LogbookWire

/// A page of the log written before it is asked for. A client that reads the log page by page
/// asks for the next page only once it has the last one, and the log-read loop would wait
/// meanwhile: after a page that stopped before the head (at its `limit` or its byte budget),
/// the loop writes the same client's next page (same `limit` and topics, from `next`) while
/// that client reads the one it has, if no other request waits. When the client's next
/// request is for that page, it is answered from these bytes with the head read again; any
/// other request drops it. Such a page's events cannot change (the log only grows past its
/// head), so the answer is the one a read at that moment gives.
struct PageAhead {
    /// The client it is for, and the read it answers.
    let route: [[UInt8]]
    let request: LogReadRequest
    /// The envelopes, comma-separated (`LogReader.appendEnvelopes`).
    var envelopes: [UInt8]
    let bounds: LogPageBounds

    /// Whether `request` from `route` is the read this page answers.
    func answers(_ route: [[UInt8]], _ request: LogReadRequest) -> Bool {
        route == self.route && request == self.request
    }

    /// The read that follows a page of `request` with `bounds`, when that page stopped before
    /// the head (nil otherwise: the client has read up to the head).
    static func following(_ request: LogReadRequest, _ bounds: LogPageBounds) -> LogReadRequest? {
        guard bounds.stoppedBeforeHead, bounds.count > 0 else { return nil }
        var next = request
        next.from = bounds.next
        return next
    }
}
