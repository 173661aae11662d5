import FoundationEssentials
public import LogbookApplication
public import LogbookJSON
import LogbookWire
public import LogbookZMQ

/// An async client of the Logbook servers for other Swift programs.
///
/// What it promises:
/// - Any number of tasks may call it at once; their requests are in flight together
///   (pipelined) and each gets the reply whose `id` matches its own.
/// - No call blocks Swift's cooperative pool: one thread of the client's own owns its
///   sockets (one DEALER per server it used) and waits on them.
/// - Each attempt of a request has `timeout`; a request that timed out is sent again with
///   the same id on a fresh socket, at most `attempts` times in all, then fails with
///   `LogbookClientError.timedOut`. The worker treats a repeated command id as a retry and
///   answers with the first outcome, so retried commands are never applied twice; a reply
///   from an abandoned socket is never read.
/// - Cancelling the calling task fails its request at once with `.cancelled`.
/// - `close()` (or the last reference going away) fails what is still waiting with
///   `.closed`, closes the sockets and ends the thread; later requests fail with `.closed`.
/// - With `security` (its own CURVE key pair and the servers' public key), every socket it
///   opens, subscriptions included, is a CURVE client; a server that does not admit the key
///   never answers, so requests time out.
public final class LogbookClient: Sendable {
    public let endpoints: ClientEndpoints
    /// How long one attempt of a request waits for its reply.
    public let timeout: Duration
    /// How many times a request is sent before it fails with `timedOut` (1 or more).
    public let attempts: Int
    /// The client's CURVE keys and the servers' public key; nil: plain connections.
    public let security: CurveClientKeys?
    private let core: ClientCore
    private let thread: OwnedThread

    /// Starts the client's thread; sockets are opened (and connected) on first use of
    /// each server, so no server needs to be up yet.
    public init(
        endpoints: ClientEndpoints = ClientEndpoints(), timeout: Duration = .seconds(5), attempts: Int = 3,
        security: CurveClientKeys? = nil
    ) throws(LogbookClientError) {
        precondition(attempts >= 1, "a request needs at least one attempt")
        precondition(timeout > .zero, "the timeout must be positive")
        let core: ClientCore
        do {
            core = try ClientCore(endpoints: endpoints, timeout: timeout, attempts: attempts, security: security)
        } catch {
            throw .transport("\(error)")
        }
        self.endpoints = endpoints
        self.timeout = timeout
        self.attempts = attempts
        self.security = security
        self.core = core
        thread = OwnedThread(name: "logbook-client") { RequestLoop(core: core).run() }
    }

    deinit {
        close()
    }

    /// Fails every waiting request with `.closed`, closes the sockets and returns once the
    /// client's thread has ended (at most one turn of its loop, never a network wait).
    /// Idempotent.
    public func close() {
        core.close()
        thread.join()
    }

    /// A fresh request or command id: a lowercased UUID.
    public static func newId() -> String {
        UUID().uuidString.lowercased()
    }

    /// Sends one request document to `server` and returns its reply document unchanged,
    /// whether `ok` is true or false (a CLI prints it verbatim).
    ///
    /// `document` must carry a string `"id"`, unique among this client's requests to that
    /// server that are still waiting; the reply is the one echoing it. Documents larger
    /// than the servers accept (`WireRequest.maximumSize` bytes) are refused here.
    public func request(_ server: ServerEndpoint, _ document: JSONObject) async throws(LogbookClientError)
        -> JSONObject
    {
        guard case .string(let id)? = document["id"], !id.isEmpty else {
            throw .invalidRequest("the document needs a non-empty string \"id\"")
        }
        let frame = JSONWriter.bytes(.object(document))
        // The servers answer a bigger request without its id, so no reply could find it.
        guard frame.count <= WireRequest.maximumSize else {
            throw .invalidRequest("the request is \(frame.count) bytes; the servers accept \(WireRequest.maximumSize)")
        }
        return try await core.submit(server, id: id, frame: frame).get()
    }

    /// Sends a command and returns the events the worker recorded for it.
    ///
    /// `commandId` identifies the command: sending the same id again (after a timeout, for
    /// instance) returns the first outcome and appends nothing. Throws `.rejected` with the
    /// worker's code when the command is refused.
    public func send(
        type: String, data: JSONObject, commandId: String = LogbookClient.newId(),
        expectedVersion: ExpectedVersion? = nil, correlationId: String? = nil, causationId: String? = nil
    ) async throws(LogbookClientError) -> CommandReceipt {
        let version: JSONValue? =
            switch expectedVersion {
            case nil: nil
            case .any?: "any"
            case .noStream?: "noStream"
            case .exactly(let version)?: .int(version)
            }
        let document = RequestDocument.command(
            id: commandId, type: type, data: .object(data), expectedVersion: version, correlationId: correlationId,
            causationId: causationId)

        let reply = try Reply(try await request(.commands, document))
        return CommandReceipt(position: try reply.int64("position"), events: try reply.events("events"))
    }

    /// Asks the query process. With `minPosition` the answer reflects at least that log
    /// position (read-your-writes), or the server answers `timeout` after `timeoutMs`.
    public func query(type: String, data: JSONObject = [:], minPosition: Int64? = nil, timeoutMs: Int? = nil)
        async throws(LogbookClientError) -> QueryAnswer
    {
        let document = RequestDocument.query(
            id: Self.newId(), type: type, data: .object(data), minPosition: minPosition.map { Int($0) },
            timeoutMilliseconds: timeoutMs)
        let reply = try Reply(try await request(.queries, document))
        guard let result = reply.object["result"] else { throw .malformedReply("the query reply has no \"result\"") }
        return QueryAnswer(position: try reply.int64("position"), result: result)
    }

    /// Reads one page of the log from position `from`, optionally only some topics
    /// (`users`, `posts`, `products`, `orders`).
    public func readLog(from position: Int64, limit: Int? = nil, topics: [String]? = nil)
        async throws(LogbookClientError) -> LogPage
    {
        let document = RequestDocument.readLog(id: Self.newId(), from: position, limit: limit, topics: topics)
        let reply = try Reply(try await request(.log, document))
        return try reply.logPage()
    }

    /// The `result` object of a server's `Status` (the commands or the queries server).
    public func status(of server: ServerEndpoint) async throws(LogbookClientError) -> JSONObject {
        let reply = try Reply(try await request(server, RequestDocument.status(id: Self.newId())))
        guard case .object(let result)? = reply.object["result"] else {
            throw .malformedReply("the status reply has no \"result\" object")
        }
        return result
    }
}

/// A reply document read by the typed calls: `ok: false` becomes `.rejected`.
private struct Reply {
    let object: JSONObject

    init(_ object: JSONObject) throws(LogbookClientError) {
        guard case .bool(let ok)? = object["ok"] else { throw .malformedReply("the reply has no boolean \"ok\"") }
        guard ok else {
            guard case .object(let error)? = object["error"], case .string(let code)? = error["code"],
                case .string(let message)? = error["message"]
            else { throw .malformedReply("a failure reply needs \"error\": {\"code\", \"message\"}") }
            throw .rejected(ServiceErrorReply(code: code, message: message, details: error["details"]))
        }
        self.object = object
    }

    func int64(_ key: String) throws(LogbookClientError) -> Int64 {
        guard case .int(let value)? = object[key] else { throw .malformedReply("\"\(key)\" must be an integer") }
        return Int64(value)
    }

    func events(_ key: String) throws(LogbookClientError) -> [RecordedEvent] {
        do {
            return try WireDecoding.recordedEvents(from: object[key], field: key)
        } catch {
            throw .malformedReply(error.message)
        }
    }

    func logPage() throws(LogbookClientError) -> LogPage {
        do {
            return try WireDecoding.logPage(from: object)
        } catch {
            throw .malformedReply(error.message)
        }
    }
}
