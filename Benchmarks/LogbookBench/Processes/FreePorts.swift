import Glibc

/// Loopback TCP ports nobody listens on right now: the system picks them (bind to port 0),
/// all sockets are held until every port is known (so they are distinct), then released for
/// the servers the bench starts.
enum FreePorts {
    static func take(_ count: Int) throws(BenchError) -> [Int] {
        var descriptors: [Int32] = []
        defer { for descriptor in descriptors { close(descriptor) } }
        var ports: [Int] = []
        for _ in 0..<count {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard descriptor >= 0 else { throw BenchError("cannot open a socket to find a free port") }
            descriptors.append(descriptor)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = 0
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                    bind(descriptor, generic, length) == 0 && getsockname(descriptor, generic, &length) == 0
                }
            }
            guard bound else {
                throw BenchError("cannot find a free loopback port: \(String(cString: strerror(errno)))")
            }
            ports.append(Int(UInt16(bigEndian: address.sin_port)))
        }
        return ports
    }
}
