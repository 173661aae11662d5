import Glibc

/// A plain TCP connection to a loopback port (Nagle off), for the Redis comparison. The
/// descriptor is closed with the object.
final class TCPConnection {
    let descriptor: Int32

    init(port: Int) throws(BenchError) {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw BenchError("cannot open a TCP socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                connect(descriptor, generic, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw BenchError("cannot connect to 127.0.0.1:\(port): \(reason)")
        }
        var one: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit {
        close(descriptor)
    }

    func makeNonBlocking() {
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    }

    /// Writes what it can of `bytes`; returns how many were written (0 when the socket is full).
    func write(_ bytes: ArraySlice<UInt8>) throws(BenchError) -> Int {
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        if written >= 0 { return written }
        if errno == EAGAIN || errno == EINTR { return 0 }
        throw BenchError("write to a TCP connection failed: \(String(cString: strerror(errno)))")
    }

    /// Reads what has arrived (blocking until something has, on a blocking socket); an
    /// empty array on a non-blocking socket with nothing waiting.
    func read() throws(BenchError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        if count > 0 { return Array(buffer.prefix(count)) }
        if count < 0 && (errno == EAGAIN || errno == EINTR) { return [] }
        throw BenchError(
            count == 0 ? "the server closed the connection" : "read failed: \(String(cString: strerror(errno)))")
    }

    /// Sends one command and waits (blocking socket) for its whole reply.
    func call(_ command: [UInt8]) throws(BenchError) -> [UInt8] {
        var sent = 0
        while sent < command.count { sent += try write(command[sent...]) }
        var reply: [UInt8] = []
        while true {
            reply += try read()
            switch RESP.scan(reply) {
            case .reply(let length, _): return Array(reply.prefix(length))
            case .incomplete: continue
            case .malformed: throw BenchError("the server's reply is not RESP")
            }
        }
    }
}
