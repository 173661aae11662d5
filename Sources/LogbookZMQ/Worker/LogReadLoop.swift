import LogbookApplication
import LogbookDomain
import LogbookJSON

/// The worker's log-read loop, on its own thread with its own connection to the log, so a
/// long replay never stalls the command loop: answers `ReadLog` requests one at a time.
struct LogReadLoop: ~Copyable {
    let router: ZMQSocket
    let reader: LogReader
    let log: ProcessLog

    /// Serves until the context is shut down.
    func run() {
        while true {
            do {
                guard let frames = try router.receive() else { continue }
                let request = RoutedRequest(frames: frames)
                let reply = answer(request)
                if !(try router.send(request.reply(reply), wait: false)) {
                    log.debug("log read reply dropped: the client is gone or not reading")
                }
            } catch {
                if error.isTerminated { return }
                // A socket error other than shutdown concerns one message; keep serving.
                log.error("log read loop: socket error", ["error": error.description])
            }
        }
    }

    /// The reply document: a page written straight as bytes (`LogReader.replyBytes`), or a failure.
    private func answer(_ routed: RoutedRequest) -> [UInt8] {
        let request: WireRequest
        do {
            request = try routed.wireRequest()
        } catch {
            return failure(id: error.id, error.error)
        }
        guard request.type == "ReadLog" else {
            return failure(
                id: request.id,
                ServiceError(
                    .unknownType, "unknown request type '\(request.type)' on the log socket (known: ReadLog)",
                    details: [("type", .string(request.type))]))
        }
        do {
            return LogReader.replyBytes(id: request.id, try reader.read(LogReadRequest(wire: request)))
        } catch {
            return failure(id: request.id, error)
        }
    }

    private func failure(id: String?, _ error: ServiceError) -> [UInt8] {
        JSONWriter.bytes(WireEncoding.failure(id: id, error))
    }
}
