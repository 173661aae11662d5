import LogbookJSON
import LogbookWire
import LogbookZMQ

/// A blocking request/reply client for the bench's own calls (`Status`, `Rebuild`,
/// `ReadLog`) on the thread that made it: a DEALER that sends `[empty][JSON]` and waits,
/// up to a timeout, for the reply echoing the request's id (replies to earlier, abandoned
/// requests are skipped).
struct ControlClient: ~Copyable {
    private let socket: ZMQSocket
    private let endpoint: String
    private var counter = 0

    /// With `keys`, the socket is a CURVE client of a secured server.
    init(_ context: ZMQContext, endpoint: String, keys: CurveClientKeys? = nil) throws(BenchError) {
        do {
            let socket = try ZMQSocket(context, .dealer)
            try socket.secure(keys)
            try socket.connect(endpoint)
            self.socket = socket
        } catch {
            throw BenchError("cannot connect to \(endpoint): \(error)")
        }
        self.endpoint = endpoint
    }

    /// Sends `{"id","type",…fields}` and returns the reply object; nil when none came in time.
    /// A reply with `"ok": false` is returned as it is.
    mutating func request(_ type: RequestType, _ fields: JSONObject = [:], timeoutMilliseconds: Int) throws(BenchError)
        -> JSONObject?
    {
        guard let bytes = try requestBytes(type, fields, timeoutMilliseconds: timeoutMilliseconds) else { return nil }
        let parsed: JSONValue
        do {
            parsed = try JSONParser.parse(bytes)
        } catch {
            throw BenchError("\(endpoint) answered \(type) with something that is not JSON: \(error)")
        }
        guard case .object(let reply) = parsed else {
            throw BenchError("\(endpoint) answered \(type) with something that is not a JSON object")
        }
        return reply
    }

    /// The same, returning the reply's bytes unparsed (a `ReadLog` page is read without
    /// decoding its events).
    mutating func requestBytes(_ type: RequestType, _ fields: JSONObject = [:], timeoutMilliseconds: Int)
        throws(BenchError) -> [UInt8]?
    {
        try exchange(type.rawValue, fields, timeoutMilliseconds: timeoutMilliseconds)
    }

    /// An admin request to the groups process (`CreateGroup`, `ShowGroup` …); its reply
    /// object, `ok` or not, or nil when none came in time.
    mutating func request(_ type: GroupRequestType, _ fields: JSONObject, timeoutMilliseconds: Int)
        throws(BenchError) -> JSONObject?
    {
        guard let bytes = try exchange(type.rawValue, fields, timeoutMilliseconds: timeoutMilliseconds) else {
            return nil
        }
        guard case .object(let reply)? = try? JSONParser.parse(bytes) else {
            throw BenchError("\(endpoint) answered \(type.rawValue) with something that is not a JSON object")
        }
        return reply
    }

    private mutating func exchange(_ type: String, _ fields: JSONObject, timeoutMilliseconds: Int)
        throws(BenchError) -> [UInt8]?
    {
        counter += 1
        let id = "bench-control-\(counter)"
        var document: JSONObject = ["id": .string(id), "type": .string(type)]
        for (key, value) in fields { document[key] = value }
        let deadline = BenchClock.nanoseconds() + UInt64(timeoutMilliseconds) * 1_000_000
        let expectedPrefix = Array("{\"id\":\"\(id)\"".utf8)
        do {
            try socket.send([[], JSONWriter.bytes(.object(document))])
            while true {
                let now = BenchClock.nanoseconds()
                guard now < deadline else { return nil }
                let wait = Int((deadline - now) / 1_000_000) + 1
                guard try ZMQPoll.wait([socket.readable], timeoutMilliseconds: wait)[0] else { continue }
                while let frames = try socket.receive(wait: false) {
                    guard let body = frames.last else { continue }
                    if body.starts(with: expectedPrefix) { return body }
                }
            }
        } catch {
            throw BenchError("\(type) to \(endpoint): \(error)")
        }
    }

    /// `Status`'s `result`, or nil when the server did not answer in time.
    mutating func status(timeoutMilliseconds: Int) throws(BenchError) -> JSONObject? {
        guard let reply = try request(.status, timeoutMilliseconds: timeoutMilliseconds) else { return nil }
        guard case .object(let result)? = reply["result"] else {
            throw BenchError("\(endpoint) answered Status without a result: \(JSONWriter.string(.object(reply)))")
        }
        return result
    }
}
