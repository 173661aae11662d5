import LogbookClient
import LogbookJSON
import LogbookZMQ
import Synchronization

/// A ROUTER on tcp loopback, on a thread of its own, that answers each request as its
/// script says (now, later, to another peer, with raw frames, or not at all) and records
/// everything it received.
final class ScriptedServer: Sendable {
    /// One received message, as the script and the test see it.
    struct Request: Sendable {
        /// The routing identity of the socket it came from.
        var identity: [UInt8]
        /// The frames after the identity: `[empty][json]` from a DEALER client.
        var frames: [[UInt8]]
        var document: JSONObject?
        var id: String?
        /// The identities that sent this id before, oldest first.
        var earlierIdentities: [[UInt8]]

        /// 1 for the first time this id arrives, 2 for its first retry …
        var sighting: Int { earlierIdentities.count + 1 }
    }

    /// What the server sends in answer to one request.
    enum Action: Sendable {
        /// `[identity][empty][json]` to the requester, after a delay.
        case reply(JSONValue, after: Duration = .zero)
        /// `[identity] + frames` to the requester.
        case raw([[UInt8]], after: Duration = .zero)
        /// `[identity][empty][json]` to another peer (an earlier socket of the client).
        case replyTo(identity: [UInt8], JSONValue, after: Duration = .zero)
    }

    typealias Script = @Sendable (Request) -> [Action]

    private struct Record: Sendable {
        var requests: [Request] = []
        var mostWaitingReplies = 0
    }

    let endpoint: String
    private let context: ZMQContext
    private let thread: OwnedThread
    private let record: Box<Record>

    /// Binds `endpoint` (by default a free loopback port) on the server's thread and
    /// returns once it listens.
    init(at endpoint: String = "tcp://127.0.0.1:*", _ script: @escaping Script) async throws {
        let context = try ZMQContext()
        let started = Box<Result<String, ZMQError>?>(nil)
        let record = Box(Record())
        self.context = context
        self.record = record
        thread = OwnedThread(name: "scripted-server") {
            Self.serve(context: context, endpoint: endpoint, script: script, started: started) { request, waiting in
                record.update {
                    $0.requests.append(request)
                    $0.mostWaitingReplies = max($0.mostWaitingReplies, waiting)
                }
            }
        }
        while started.value == nil { try await Task.sleep(for: .milliseconds(1)) }
        self.endpoint = try started.value!.get()
    }

    deinit {
        context.shutdown()
    }

    /// The same server for commands, queries and log reads.
    var endpoints: ClientEndpoints {
        ClientEndpoints(commands: endpoint, feed: "tcp://127.0.0.1:1", queries: endpoint, log: endpoint)
    }

    /// Everything received so far, in order.
    var requests: [Request] { record.value.requests }

    /// The receipts of one request id, in order.
    func requests(id: String) -> [Request] { requests.filter { $0.id == id } }

    /// The largest number of replies the script had scheduled and not yet sent.
    var mostWaitingReplies: Int { record.value.mostWaitingReplies }

    /// Waits until the server has received `id` at least `count` times (for at most two
    /// minutes, an upper bound only a broken client runs out).
    func waitUntilReceived(_ id: String, count: Int = 1) async throws {
        let deadline = ContinuousClock.now + .seconds(120)
        while requests(id: id).count < count && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    /// Stops the server and waits until its thread ended and its socket is closed.
    func stop() async {
        context.shutdown()
        while !thread.isFinished { try? await Task.sleep(for: .milliseconds(1)) }
        thread.join()
    }

    private static func serve(
        context: ZMQContext, endpoint: String, script: Script, started: Box<Result<String, ZMQError>?>,
        received: (Request, Int) -> Void
    ) {
        do throws(ZMQError) {
            let socket = try ZMQSocket(context, .router)
            try socket.bind(endpoint)
            started.value = .success(try socket.lastEndpoint())
            var scheduled: [(due: ContinuousClock.Instant, frames: [[UInt8]])] = []
            var identitiesById: [String: [[UInt8]]] = [:]
            while true {
                let now = ContinuousClock.now
                // Send what is due, in the order the script asked for it. A message to a
                // peer that is gone is simply lost, as it would be for a real server.
                for message in scheduled where message.due <= now {
                    _ = try socket.send(message.frames, wait: false)
                }
                scheduled.removeAll { $0.due <= now }
                let timeout = scheduled.map(\.due).min().map { due in
                    max(0, Int(((due - now) / .milliseconds(1)).rounded(.up)))
                }
                _ = try ZMQPoll.wait([socket.readable], timeoutMilliseconds: timeout ?? -1)
                while let frames = try socket.receive(wait: false) {
                    guard frames.count >= 2 else { continue }
                    let identity = frames[0]
                    let body = Array(frames.dropFirst())
                    let json = body.count == 2 && body[0].isEmpty ? body[1] : body[body.count - 1]
                    let document = (try? JSONParser.parse(json))?.objectValue
                    let id = document?["id"]?.stringValue
                    let request = Request(
                        identity: identity, frames: body, document: document, id: id,
                        earlierIdentities: id.flatMap { identitiesById[$0] } ?? [])
                    if let id { identitiesById[id, default: []].append(identity) }
                    let arrival = ContinuousClock.now
                    for action in script(request) {
                        switch action {
                        case .reply(let value, let delay):
                            scheduled.append((arrival + delay, [identity, [], JSONWriter.bytes(value)]))
                        case .raw(let frames, let delay):
                            scheduled.append((arrival + delay, [identity] + frames))
                        case .replyTo(let other, let value, let delay):
                            scheduled.append((arrival + delay, [other, [], JSONWriter.bytes(value)]))
                        }
                    }
                    received(request, scheduled.count)
                }
            }
        } catch {
            if !error.isTerminated { started.value = .failure(error) }
        }
    }
}

/// `{"id": <the request's id>, "ok": true, …fields}`.
func success(_ request: ScriptedServer.Request, _ fields: JSONObject = [:]) -> JSONValue {
    var reply: JSONObject = ["id": request.id.map(JSONValue.string) ?? .null, "ok": true]
    for (key, value) in fields { reply[key] = value }
    return .object(reply)
}

/// Answers every request at once with `{"id","ok":true,"echo":<the request>}`.
let echo: ScriptedServer.Script = { request in
    [.reply(success(request, ["echo": request.document.map(JSONValue.object) ?? .null]))]
}

/// A value one thread records and another reads.
final class Box<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>

    init(_ value: Value) { storage = Mutex(value) }

    var value: Value {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }

    func update(_ change: (inout Value) -> Void) {
        storage.withLock { change(&$0) }
    }
}

/// The UTF-8 bytes of `text`, for frames.
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
