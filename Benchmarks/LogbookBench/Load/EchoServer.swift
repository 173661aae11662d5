import LogbookZMQ

/// The bare libzmq baseline: a ROUTER on a thread of the bench's own that answers every
/// request at once with the request itself, padded to `replySize` bytes (the size of the
/// service's replies), and does nothing else. What the service adds on top of this is the
/// cost of deciding, storing and encoding.
final class EchoServer: Sendable {
    let endpoint: String
    private let context: ZMQContext
    private let thread: OwnedThread
    private let failure: Shared<String?>

    init(replySize: Int) throws(BenchError) {
        let context: ZMQContext
        do {
            context = try ZMQContext()
        } catch {
            throw BenchError("cannot start the echo server: \(error)")
        }
        let bound = Handoff<Result<String, ZMQError>>()
        let failure = Shared<String?>(nil)
        thread = OwnedThread(name: "bench-echo") {
            do throws(ZMQError) {
                let router = try ZMQSocket(context, .router)
                try router.set(.sendHighWaterMark, 0)
                try router.set(.receiveHighWaterMark, 0)
                try router.bind("tcp://127.0.0.1:*")
                bound.put(.success(try router.lastEndpoint()))
                if let error = Self.serve(router, replySize: replySize) { failure.update { $0 = error.description } }
            } catch {
                bound.put(.failure(error))
            }
        }
        switch bound.take() {
        case .success(let endpoint): self.endpoint = endpoint
        case .failure(let error):
            context.shutdown()
            thread.join()
            throw BenchError("cannot start the echo server: \(error)")
        }
        self.context = context
        self.failure = failure
    }

    /// Echoes until the context is shut down; returns any other error that stopped it.
    private static func serve(_ router: borrowing ZMQSocket, replySize: Int) -> ZMQError? {
        while true {
            do {
                _ = try ZMQPoll.wait([router.readable], timeoutMilliseconds: -1)
                while var frames = try router.receive(wait: false) {
                    let missing = replySize - (frames.last?.count ?? 0)
                    if missing > 0 { frames[frames.count - 1] += [UInt8](repeating: 0x20, count: missing) }
                    _ = try router.send(frames, wait: false)
                }
            } catch {
                return error.isTerminated ? nil : error
            }
        }
    }

    /// Stops the server; returns why it had stopped serving before, if it had.
    func stop() -> String? {
        context.shutdown()
        thread.join()
        return failure.value
    }
}
