import LogbookZMQ

/// The order every service stops in, written once: ask its serving loops to stop and wait for
/// them (bounded), wake every other thread with the context's shutdown and join them all,
/// then, when the service made its context, end it, so that libzmq hands on what the closed
/// sockets still hold (the last replies and feed messages, within their linger) before the
/// process exits: at exit, libzmq's I/O threads die with whatever they hold.
struct ServiceStop {
    let stopRequest: StopRequest
    /// How many serving loops report to `stopRequest`.
    let loops: Int
    let context: ZMQContext
    let threads: ThreadGroup
    /// Whether the service made `context` (a test may share its own, whose sockets stay open).
    let ownsContext: Bool

    /// Runs the stop; `afterJoin` joins threads outside the group that hold sockets of the
    /// context (a socket monitor's reader), before the context ends.
    func perform(afterJoin: () -> Void = {}) {
        stopRequest.request()
        stopRequest.waitForLoops(loops, upTo: 2 * StopRequest.drainMilliseconds)
        context.shutdown()
        threads.joinAll()
        afterJoin()
        if ownsContext { context.terminate() }
    }
}
