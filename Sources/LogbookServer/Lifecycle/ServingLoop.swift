import LogbookZMQ

/// A serving loop of a process (commands, queries, log reads, the feed's publishing): made
/// on a thread of its own, then run there until it is stopped.
protocol ServingLoop: ~Copyable {
    /// Serves until the context is shut down or a stop is requested.
    mutating func run()
}

extension StartupGate {
    /// How a serving thread starts, written once: `making` opens what the loop needs (its
    /// store, its sockets) and makes it; then this gate opens and the loop runs on this
    /// thread. When `making` throws, the gate fails instead and nothing runs: a `ZMQError` is
    /// put down to `sockets`, any other error to `store`.
    func serve<Loop: ServingLoop & ~Copyable>(sockets: String, store: String, _ making: () throws -> Loop) {
        var loop: Loop
        do {
            loop = try making()
        } catch let error as ZMQError {
            return fail(ServiceStartError(sockets, error.description))
        } catch {
            return fail(ServiceStartError(store, "\(error)"))
        }
        open()
        loop.run()
    }
}
