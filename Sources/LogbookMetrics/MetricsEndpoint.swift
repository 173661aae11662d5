import CMicroHTTPD
import Glibc
import Synchronization

/// An HTTP server (libmicrohttpd, on a thread of its own) that answers `GET /metrics` with
/// what `render` writes, in the text exposition format, and anything else with 404 or 405.
/// `init` binds and listens before it returns, or throws why it could not, so a process
/// can refuse to start on a taken port; `stop()` (or deinit) closes it. `render` runs on
/// the server's thread, once per scrape: it must only read what other threads share
/// behind their locks, never a socket or connection another thread owns.
public final class MetricsEndpoint: Sendable {
    /// The address bound, with the port the kernel chose when 0 was asked.
    public let boundAddress: MetricsAddress
    private let daemon: Mutex<OpaquePointer?>
    private let responder: Responder

    /// At most this many scrapers connected at once; each idle one is closed after the timeout.
    static let connectionLimit: UInt32 = 32
    static let idleTimeoutSeconds: UInt32 = 10

    public init(_ address: MetricsAddress, render: @escaping @Sendable () -> String) throws(MetricsEndpointError) {
        let listener = try Self.listen(address)
        responder = Responder(render: render)
        let context = Unmanaged.passUnretained(responder).toOpaque()
        let started = logbook_metrics_start(
            listener.descriptor,
            { context, connection, url, method, _, _, _, _ in
                guard let context, let connection else { return MHD_Result.NO }
                let responder = Unmanaged<Responder>.fromOpaque(context).takeUnretainedValue()
                let reply = responder.reply(
                    method: method.map { String(cString: $0) } ?? "", path: url.map { String(cString: $0) } ?? "")
                return reply.body.withUnsafeBytes { body in
                    logbook_metrics_respond(connection, reply.status, reply.contentType, body.baseAddress, body.count)
                }
            }, context, Self.connectionLimit, Self.idleTimeoutSeconds)
        guard let started else {
            close(listener.descriptor)
            throw MetricsEndpointError(address, "the HTTP server did not start")
        }
        daemon = Mutex(started)
        boundAddress = listener.address
    }

    deinit { stop() }

    /// Closes the listening socket and every connection; waits for the server's thread.
    public func stop() {
        let running = daemon.withLock { daemon in
            defer { daemon = nil }
            return daemon
        }
        if let running { MHD_stop_daemon(running) }
    }

    /// A socket bound to `address` and listening, and the address as bound.
    private static func listen(_ address: MetricsAddress) throws(MetricsEndpointError) -> (
        descriptor: Int32, address: MetricsAddress
    ) {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV | AI_PASSIVE
        var found: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(address.host, String(address.port), &hints, &found)
        guard resolved == 0, let first = found else {
            throw MetricsEndpointError(
                address, "cannot resolve '\(address.host)': \(String(cString: gai_strerror(resolved)))")
        }
        defer { freeaddrinfo(found) }
        let descriptor = socket(first.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw MetricsEndpointError(address, "socket: \(Self.errorText())") }
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        guard bind(descriptor, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0, Glibc.listen(descriptor, 64) == 0
        else {
            let reason = Self.errorText()
            close(descriptor)
            throw MetricsEndpointError(address, reason)
        }
        var bound = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let port =
            withUnsafeMutablePointer(to: &bound) { storage in
                storage.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
            } == 0 ? Self.port(of: bound) : address.port
        return (descriptor, MetricsAddress(host: address.host, port: port))
    }

    private static func port(of storage: sockaddr_storage) -> UInt16 {
        var storage = storage
        let family = storage.ss_family
        return withUnsafePointer(to: &storage) { pointer in
            if family == sa_family_t(AF_INET6) {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    UInt16(bigEndian: $0.pointee.sin6_port)
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                UInt16(bigEndian: $0.pointee.sin_port)
            }
        }
    }

    private static func errorText() -> String { String(cString: strerror(errno)) }
}

/// What the server's thread calls for each request: `GET /metrics` (or `HEAD`) renders.
private final class Responder: Sendable {
    struct Reply {
        let status: UInt32
        let contentType: String
        let body: [UInt8]
    }

    let render: @Sendable () -> String

    init(render: @escaping @Sendable () -> String) { self.render = render }

    func reply(method: String, path: String) -> Reply {
        guard method == "GET" || method == "HEAD" else {
            return Reply(status: 405, contentType: "text/plain; charset=utf-8", body: Array("only GET\n".utf8))
        }
        guard path == "/metrics" else {
            return Reply(status: 404, contentType: "text/plain; charset=utf-8", body: Array("try /metrics\n".utf8))
        }
        return Reply(status: 200, contentType: ExpositionWriter.contentType, body: Array(render().utf8))
    }
}
