import LogbookJSON
import LogbookZMQ

/// A DEALER socket of the test thread, speaking the wire contract to one ROUTER: each
/// request goes out as `[empty][JSON]`, each reply is read within a bound, so a reply that
/// never comes fails the test instead of hanging it.
struct DealerClient: ~Copyable {
    enum Failure: Error {
        case noReply(String)
        case notAReply([[UInt8]])
    }

    private let socket: ZMQSocket

    init(_ context: ZMQContext, _ endpoint: String) throws {
        let socket = try ZMQSocket(context, .dealer)
        try socket.connect(endpoint)
        self.socket = socket
    }

    /// Sends `request` without waiting for its reply.
    func send(_ request: JSONValue) throws {
        try send(frame: JSONWriter.bytes(request))
    }

    /// Sends one request frame as it is (unreadable ones too).
    func send(frame: [UInt8]) throws {
        try socket.send([[], frame])
    }

    /// The next reply, within `milliseconds`.
    func receive(within milliseconds: Int = patienceMilliseconds) throws -> JSONObject {
        let deadline = ContinuousClock.now + .milliseconds(milliseconds)
        while true {
            if let frames = try socket.receive(wait: false) {
                guard frames.count == 2, frames[0].isEmpty, case .object(let reply) = try JSONParser.parse(frames[1])
                else { throw Failure.notAReply(frames) }
                return reply
            }
            let left = deadline - .now
            guard left > .zero else { throw Failure.noReply("nothing within \(milliseconds) ms") }
            _ = try ZMQPoll.wait([socket.readable], timeoutMilliseconds: Int(left / .milliseconds(1)) + 1)
        }
    }

    /// Sends `request` and waits for its reply.
    func request(_ request: JSONValue, within milliseconds: Int = patienceMilliseconds) throws -> JSONObject {
        try send(request)
        return try receive(within: milliseconds)
    }

    /// Whether a reply is waiting right now (without taking it).
    func hasReply() throws -> Bool {
        try ZMQPoll.wait([socket.readable], timeoutMilliseconds: 0)[0]
    }
}
