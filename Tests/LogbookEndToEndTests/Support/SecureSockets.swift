import LogbookJSON
import LogbookZMQ

/// A socket of a secure-bus test, in a class so a test can hold many (an array cannot hold
/// a non-copyable socket). Made and used on one thread (inside `offThePool`).
final class TestSocket {
    let socket: ZMQSocket

    /// A DEALER (or SUB subscribed to everything) connected to `endpoint`, with `keys` (none:
    /// plain). `reconnect` milliseconds between connection attempts.
    init(
        _ context: ZMQContext, _ kind: SocketKind, _ endpoint: String, _ keys: CurveClientKeys?,
        reconnect: Int32 = 100
    ) throws {
        let socket = try ZMQSocket(context, kind)
        try socket.set(.reconnectInterval, reconnect)
        try socket.secure(keys)
        if kind == .subscriber { try socket.subscribe("") }
        try socket.connect(endpoint)
        self.socket = socket
    }

    /// Sends one request document after the empty delimiter, without waiting.
    func send(_ document: JSONObject) throws {
        try socket.send([[], JSONWriter.bytes(.object(document))], wait: false)
    }

    /// The next message within `milliseconds`, or nil.
    func receive(within milliseconds: Int) throws -> [[UInt8]]? {
        guard try ZMQPoll.wait([socket.readable], timeoutMilliseconds: milliseconds)[0] else { return nil }
        return try socket.receive(wait: false)
    }

    /// A request and its reply document, or nil when none came within `milliseconds`.
    func ask(_ document: JSONObject, within milliseconds: Int = 5_000) throws -> JSONObject? {
        try send(document)
        guard let frames = try receive(within: milliseconds), let body = frames.last else { return nil }
        return try JSONParser.parse(body).objectValue
    }

    /// Whether a message is waiting now.
    var hasMessage: Bool { (try? ZMQPoll.wait([socket.readable], timeoutMilliseconds: 0)[0]) ?? false }
}
