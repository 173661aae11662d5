import LogbookApplication
import LogbookDomain
import LogbookJSON
import LogbookWire
import LogbookZMQ

/// The worker's log-read loop, on its own thread with its own connection to the log, so a
/// long replay never stalls the command loop: answers `ReadLog` requests one at a time.
/// With CURVE on, `ReadLog` needs `reader` (or `admin`); a revoked key gets no reply.
struct LogReadLoop: ~Copyable {
    let router: ZMQSocket
    let reader: LogReader
    let diagnostics: Diagnostics
    var requestGuard = RequestGuard(security: nil)

    /// Serves until the context is shut down.
    func run() {
        // One buffer for every page: a page is megabytes, and fresh memory costs page faults.
        var buffer: [UInt8] = []
        while true {
            do {
                guard let message = try router.receiveMessage() else { continue }
                let request = RoutedRequest(message)
                guard requestGuard.isListed(request.metadata) else { continue }
                answer(request, into: &buffer)
                if !(try router.send(request.reply(buffer), wait: false)) {
                    diagnostics.debug("log read reply dropped: the client is gone or not reading")
                }
            } catch {
                if error.isTerminated { return }
                // A socket error other than shutdown concerns one message; keep serving.
                diagnostics.error("log read loop: socket error", ["error": error.description])
            }
        }
    }

    /// Writes the reply document into `output`: a page written straight as bytes
    /// (`LogReader.writeReply`), or a failure.
    private func answer(_ routed: RoutedRequest, into output: inout [UInt8]) {
        let request: WireRequest
        do {
            request = try routed.wireRequest()
        } catch {
            output = failure(id: error.id, error.error)
            return
        }
        if case .unauthorized(let error) = requestGuard.admit(routed.metadata, for: .readLog) {
            output = failure(id: request.id, error)
            return
        }
        guard request.type == "ReadLog" else {
            output = failure(
                id: request.id,
                ServiceError(
                    .unknownType, "unknown request type '\(request.type)' on the log socket (known: ReadLog)",
                    details: [("type", .string(request.type))]))
            return
        }
        do {
            LogReader.writeReply(id: request.id, try reader.read(LogReadRequest(wire: request)), into: &output)
        } catch {
            output = failure(id: request.id, error)
        }
    }

    private func failure(id: String?, _ error: ServiceError) -> [UInt8] {
        JSONWriter.bytes(WireEncoding.failure(id: id, error))
    }
}
