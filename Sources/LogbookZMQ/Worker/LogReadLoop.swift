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
                if !(try router.send(request.reply(JSONWriter.bytes(reply)), wait: false)) {
                    log.debug("log read reply dropped: the client is gone or not reading")
                }
            } catch {
                if error.isTerminated { return }
                // A socket error other than shutdown concerns one message; keep serving.
                log.error("log read loop: socket error", ["error": error.description])
            }
        }
    }

    private func answer(_ routed: RoutedRequest) -> JSONValue {
        let request: WireRequest
        do {
            request = try routed.wireRequest()
        } catch {
            return WireEncoding.failure(id: error.id, error.error)
        }
        guard request.type == "ReadLog" else {
            return WireEncoding.failure(
                id: request.id,
                ServiceError(
                    .unknownType, "unknown request type '\(request.type)' on the log socket (known: ReadLog)",
                    details: [("type", .string(request.type))]))
        }
        do {
            return LogReader.reply(id: request.id, try reader.read(LogReadRequest(wire: request)))
        } catch {
            return WireEncoding.failure(id: request.id, error)
        }
    }
}
