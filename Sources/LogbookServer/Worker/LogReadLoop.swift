import LogbookApplication
import LogbookDomain
import LogbookJSON
import LogbookWire
import LogbookZMQ

/// The worker's log-read loop, on its own thread with its own connection to the log, so a
/// long replay never stalls the command loop: answers `ReadLog` requests one at a time.
/// With CURVE on, `ReadLog` needs `reader` (or `admin`); a revoked key gets no reply.
///
/// A page is megabytes, so libzmq queues two per client (`ServerSockets.ReplyQueue.logPages`)
/// and the rest wait in a `ReplyOutbox` bounded by bytes; a client refused for want of that
/// budget (it sends requests and does not read the replies) has its further requests
/// dropped unread, without reading the log for them, until it has read what was kept. When `stop` is
/// requested it takes no new request and hands on the pages still waiting (bounded).
struct LogReadLoop: ServingLoop, ~Copyable {
    let router: ZMQSocket
    let reader: LogReader
    let diagnostics: Diagnostics
    var requestGuard = RequestGuard(security: nil)
    /// Checked in on every turn, for the supervisor's watchdog.
    var heartbeat = Heartbeat()
    var stop: StopRequest?

    /// The log-read thread of a worker or a feed process, for `ThreadGroup.startGated`.
    /// With `security`, the log ROUTER is a CURVE server (the process's ZAP handler must be up).
    static func thread(
        _ context: ZMQContext, at endpoint: String, openStore: @escaping WorkerService.StoreOpener,
        diagnostics: Diagnostics, security: ServerSecurity? = nil, supervision: Supervision = Supervision(),
        stop: StopRequest? = nil
    ) -> (name: String, body: @Sendable (StartupGate) -> Void) {
        (
            "logbook-log-reads",
            { gate in
                defer { stop?.loopEnded() }
                serve(
                    context, at: endpoint, openStore: openStore, diagnostics: diagnostics, security: security,
                    heartbeat: supervision.heartbeat(for: "log reads"), stop: stop, gate)
            }
        )
    }

    /// Opens a connection to the log and binds the log ROUTER at `endpoint`, tells `gate`
    /// that it did (or why it could not), then serves until the context is shut down. The
    /// body of a log-read thread, in a worker and in a feed process.
    static func serve(
        _ context: ZMQContext, at endpoint: String, openStore: WorkerService.StoreOpener, diagnostics: Diagnostics,
        security: ServerSecurity?, heartbeat: Heartbeat = Heartbeat(), stop: StopRequest?, _ gate: StartupGate
    ) {
        gate.serve(sockets: "log socket", store: "event log") {
            let reader = LogReader(store: RetriedReads(try openStore()))
            return LogReadLoop(
                router: try ServerSockets.router(context, at: endpoint, replies: .logPages, security: security),
                reader: reader, diagnostics: diagnostics, requestGuard: RequestGuard(security: security),
                heartbeat: heartbeat, stop: stop)
        }
    }

    /// Serves until the context is shut down or `stop` is requested.
    func run() {
        // One buffer for every page: a page is megabytes, and fresh memory costs page faults.
        var buffer: [UInt8] = []
        // The page written ahead (`PageAhead`), and the bytes it keeps for the next one.
        var ahead: PageAhead?
        var spare: [UInt8] = []
        var outbox = ReplyOutbox()
        while true {
            do {
                var items = [router.readable]
                if let stop { items.append(stop.readable) }
                _ = try ZMQPoll.wait(items, timeoutMilliseconds: heartbeat.pollTimeout(outbox.pollTimeout))
                heartbeat.beat()
                try outbox.flush(on: router)
                if let stop, stop.isRequested {
                    try outbox.drain(on: router, forMilliseconds: StopRequest.drainMilliseconds)
                    return try router.set(.linger, Int32(StopRequest.drainMilliseconds))
                }
                guard let message = try router.receiveMessage(wait: false) else { continue }
                let request = RoutedRequest(message)
                guard requestGuard.isListed(request.metadata) else { continue }
                guard !outbox.isOverBudget(request.route) else {
                    diagnostics.debug("log read dropped: the client is not reading its replies")
                    continue
                }
                let following = answer(request, ahead: &ahead, spare: &spare, into: &buffer)
                let delivery = try outbox.send(
                    request.reply(buffer), on: router, reportingDropOf: "log read reply", to: diagnostics)
                // Kept (the client has not read what it was sent yet) or dropped: no page ahead.
                guard delivery == .sent else { continue }
                // While the client reads this page, write its next one, unless others wait.
                if let following, try ZMQPoll.wait([router.readable], timeoutMilliseconds: 0) == [false] {
                    ahead = writeAhead(following, for: request.route, into: &spare)
                }
            } catch {
                if error.isTerminated { return }
                // A socket error other than shutdown concerns one message; keep serving.
                diagnostics.error("log read loop: socket error", ["error": error.description])
            }
        }
    }

    /// Writes the reply document into `output`: the page written ahead when it is the one
    /// asked for, else a page written straight from the store's rows as bytes
    /// (`LogReader.writeReply(id:reading:into:)`), or a failure. Returns the read that
    /// follows the page, when it stopped before the head. Any request takes the page ahead
    /// (its bytes go back to `spare`).
    private func answer(
        _ routed: RoutedRequest, ahead: inout PageAhead?, spare: inout [UInt8], into output: inout [UInt8]
    ) -> LogReadRequest? {
        let written = ahead.take()
        if let written { spare = written.envelopes }
        let request: WireRequest
        do {
            request = try routed.wireRequest()
        } catch {
            output = failure(id: error.id, error.error)
            return nil
        }
        if case .unauthorized(let error) = requestGuard.admit(routed.metadata, for: .readLog) {
            output = failure(id: request.id, error)
            return nil
        }
        guard request.requestType == .readLog else {
            output = failure(
                id: request.id,
                ServiceError(
                    .unknownType,
                    "unknown request type '\(request.type)' on the log socket (known: \(RequestType.readLog.rawValue))",
                    details: [("type", .string(request.type))]))
            return nil
        }
        do {
            let read = try LogReadRequest(wire: request)
            if let written, written.answers(routed.route, read) {
                let head = try reader.headPosition()
                LogReader.writeReply(
                    id: request.id, envelopes: written.envelopes, next: written.bounds.next,
                    head: max(head, written.bounds.head), into: &output)
                return PageAhead.following(read, written.bounds)
            }
            guard let bounds = try reader.writeReply(id: request.id, reading: read, into: &output) else { return nil }
            return PageAhead.following(read, bounds)
        } catch {
            if let detail = error.serverDetail {
                diagnostics.warning("log read failed: the event log cannot be read", ["error": detail])
            }
            output = failure(id: request.id, error)
            return nil
        }
    }

    /// The page `request` asks for, written into `bytes` (whose capacity it keeps); nil when
    /// it cannot be written now (the read that asks for it then gets the answer or the error).
    private func writeAhead(_ request: LogReadRequest, for route: [[UInt8]], into bytes: inout [UInt8])
        -> PageAhead?
    {
        bytes.removeAll(keepingCapacity: true)
        do {
            let bounds = try reader.appendEnvelopes(reading: request, to: &bytes)
            return PageAhead(route: route, request: request, envelopes: bytes, bounds: bounds)
        } catch {
            diagnostics.debug("log page not written ahead", ["error": "\(error)"])
            return nil
        }
    }

    private func failure(id: String?, _ error: ServiceError) -> [UInt8] {
        JSONWriter.bytes(WireEncoding.failure(id: id, error))
    }
}
