import LogbookApplication
import LogbookWire
import LogbookZMQ

/// A message a ROUTER socket received, split into the route back to its sender (the
/// identity frame and the empty delimiter a REQ or DEALER client sends) and the one JSON
/// frame of the request, with what libzmq knows of the sender's connection (its key and
/// role when CURVE is on). A message of any other shape keeps a route for the error reply.
struct RoutedRequest {
    /// The frames to put before the reply so it reaches the sender.
    let route: [[UInt8]]
    /// The sender's connection: the user id (its key) and role the ZAP handler gave it.
    let metadata: MessageMetadata
    /// The request frame, or nil when the frames were not `[identity…][empty][request]`.
    private let body: [UInt8]?
    /// Why the frames were refused when `body` is nil.
    private let problem: String?

    init(_ message: ReceivedMessage) {
        self.init(frames: message.frames, metadata: message.metadata)
    }

    init(frames: [[UInt8]], metadata: MessageMetadata = MessageMetadata()) {
        self.metadata = metadata
        // A ROUTER always puts the sender's identity first.
        guard frames.count >= 2, let delimiter = frames[1...].firstIndex(where: \.isEmpty) else {
            route = [frames.first ?? [], []]
            body = nil
            problem =
                "expected an empty delimiter frame, then one JSON frame (send from REQ, or DEALER with an empty first frame)"
            return
        }
        route = Array(frames[...delimiter])
        let rest = frames[(delimiter + 1)...]
        if rest.count == 1, let only = rest.first {
            body = only
            problem = nil
        } else {
            body = nil
            problem = "expected exactly one JSON frame after the empty delimiter, got \(rest.count)"
        }
    }

    /// The request document, or the `malformed_request` to reply with (frames of the wrong
    /// shape, or a frame that is not a request object).
    func wireRequest() throws(WireRequestError) -> WireRequest {
        guard let body else {
            throw WireRequestError(id: nil, ServiceError(.malformedRequest, problem ?? "unreadable frames"))
        }
        return try WireRequest(frame: body)
    }

    /// The frames of a reply to this request.
    func reply(_ document: [UInt8]) -> [[UInt8]] {
        route + [document]
    }
}
