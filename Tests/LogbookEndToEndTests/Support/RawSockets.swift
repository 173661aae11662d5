import LogbookJSON
import LogbookZMQ
import Testing

/// A raw DEALER or REQ connection to one server, for sending frames the client library never
/// would. Not `Sendable`: make it and use it on one thread (inside `offThePool`). It
/// records no issues itself (a thread of its own has no test to attribute them to): it
/// returns what came, for the test to judge.
struct RawConnection: ~Copyable {
    private let socket: ZMQSocket

    init(_ context: ZMQContext, _ kind: SocketKind = .dealer, to endpoint: String) throws {
        let socket = try ZMQSocket(context, kind)
        try socket.connect(endpoint)
        self.socket = socket
    }

    /// Sends `frames` exactly as given (a DEALER adds nothing; a REQ adds its empty delimiter).
    func send(_ frames: [[UInt8]]) throws {
        guard try socket.send(frames) else { throw RawSocketError.notSent }
    }

    /// The next message, or nil when none came within `timeoutMilliseconds`.
    func receive(within timeoutMilliseconds: Int = 5_000) throws -> [[UInt8]]? {
        let ready = try ZMQPoll.wait([socket.readable], timeoutMilliseconds: timeoutMilliseconds)
        guard ready[0] else { return nil }
        return try socket.receive(wait: false)
    }
}

enum RawSocketError: Error {
    case notSent
}

/// A reply as a raw socket received it, judged on the test's own task.
struct RawReply: Sendable {
    var frames: [[UInt8]]?
    var overREQ: Bool

    /// The reply document after checking the framing: `[empty][json]` on a DEALER, `[json]`
    /// on a REQ.
    func document(_ context: @autoclosure () -> String) -> JSONObject? {
        guard let frames else {
            Issue.record("no reply: \(context())")
            return nil
        }
        if overREQ {
            #expect(frames.count == 1, "a REQ reply is one frame, got \(frames.count): \(context())")
        } else {
            #expect(
                frames.count == 2 && frames.first?.isEmpty == true, "a DEALER reply is [empty][json]: \(context())")
        }
        return (try? JSONParser.parse(frames.last ?? []))?.objectValue
    }
}

/// What a refusal on the wire says.
struct WireRefusal: Equatable, CustomStringConvertible {
    var id: JSONValue?
    var code: String?
    var details: JSONObject?

    init(_ reply: JSONObject?) {
        id = reply?["id"]
        code = reply?["error"]?.objectValue?["code"]?.stringValue
        details = reply?["error"]?.objectValue?["details"]?.objectValue
        let ok = reply?["ok"]
        #expect(
            ok == .bool(false), "expected a refusal, got \(reply.map { JSONWriter.string(.object($0)) } ?? "nothing")")
        #expect(reply?["error"]?.objectValue?["message"]?.stringValue?.isEmpty == false, "a refusal has a message")
    }

    var description: String { "id \(id.map { JSONWriter.string($0) } ?? "absent") code \(code ?? "none")" }
}
