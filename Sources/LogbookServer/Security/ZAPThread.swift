import LogbookZMQ

/// Starts a process's ZAP handler (`ZAPHandler`) on a thread of its own and waits until it
/// is bound, so the caller binds its CURVE server sockets only after. Every process with
/// server sockets calls this first when security is on (the worker, the query process, and
/// any later role); a failure must stop the process from starting: a CURVE server without a
/// handler admits every key.
enum ZAPThread {
    static func start(
        _ context: ZMQContext, security: ServerSecurity, diagnostics: Diagnostics, threads: ThreadGroup,
        supervision: Supervision = Supervision()
    ) throws(ServiceStartError) {
        let gate = StartupGate()
        threads.start(name: "logbook-zap") {
            let heartbeat = supervision.heartbeat(for: "ZAP handler")
            let socket: ZMQSocket
            do {
                socket = try ZAPHandler.bind(context)
            } catch {
                return gate.fail(
                    ServiceStartError(
                        "ZAP handler", "\(error); refusing to start, as CURVE without it would admit every key"))
            }
            gate.open()
            ZAPHandler.serve(
                socket, security: security, observer: HandshakeDiagnostics(diagnostics),
                waitMilliseconds: heartbeat.pollTimeout(ZAPHandler.quietMilliseconds), turned: heartbeat.beat)
        }
        try gate.wait()
    }
}
