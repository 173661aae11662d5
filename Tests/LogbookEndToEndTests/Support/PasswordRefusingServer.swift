import Foundation
import Glibc
import LogbookZMQ

/// A loopback server that speaks just enough of PostgreSQL's protocol (version 3) to ask
/// a client for its password and refuse it, as a real server does for a wrong one (the
/// test cluster trusts every local login, so it cannot). It declines SSL and GSSAPI
/// encryption, asks for a cleartext password, then answers FATAL 28P01. One thread, until
/// `stop()`.
final class PasswordRefusingServer: Sendable {
    let port: Int
    private let listener: Int32
    private let stopping = Stop()
    private let thread: OwnedThread

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0 && listen(fd, 8) == 0
            }
        }
        guard bound else {
            close(fd)
            throw ClusterError.notAnswering("cannot listen for the fake PostgreSQL server")
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let stopping = self.stopping
        thread = OwnedThread(name: "e2e-fake-postgres") {
            while !stopping.isSet {
                var poll = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard Glibc.poll(&poll, 1, 50) > 0 else { continue }
                let client = accept(fd, nil, nil)
                guard client >= 0 else { continue }
                Self.refuse(client)
                close(client)
            }
        }
    }

    /// Stops accepting and waits for the thread.
    func stop() {
        stopping.set()
        thread.join()
        close(listener)
    }

    private static func refuse(_ client: Int32) {
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        // Start-up packets: length, then a code; SSL (80877103) and GSSAPI (80877104)
        // requests are declined with 'N', the real start-up (protocol 3.0) goes on.
        while let packet = readPacket(client, typed: false) {
            let code = packet.prefix(4).reduce(0) { $0 << 8 | UInt32($1) }
            if code == 80_877_103 || code == 80_877_104 {
                send(client, [UInt8(ascii: "N")])
                continue
            }
            send(client, message("R", int32(3)))  // AuthenticationCleartextPassword
            _ = readPacket(client, typed: true)  // the password message, ignored
            var fields: [UInt8] = []
            for (key, value) in [
                ("S", "FATAL"), ("V", "FATAL"), ("C", "28P01"),
                ("M", "password authentication failed for user \"logbook\""),
            ] {
                fields += Array(key.utf8) + Array(value.utf8) + [0]
            }
            send(client, message("E", fields + [0]))
            return
        }
    }

    /// One packet's body: `[type]` (when `typed`), a length counting itself, the body.
    private static func readPacket(_ client: Int32, typed: Bool) -> [UInt8]? {
        guard !typed || read(client, count: 1) != nil, let header = read(client, count: 4) else { return nil }
        let length = Int(header.reduce(0) { $0 << 8 | UInt32($1) })
        guard length >= 4, length < 1 << 20 else { return nil }
        return read(client, count: length - 4)
    }

    private static func read(_ client: Int32, count: Int) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress! + done, count - done, 0) }
            guard got > 0 else { return nil }
            done += got
        }
        return buffer
    }

    private static func send(_ client: Int32, _ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    private static func message(_ type: Character, _ body: [UInt8]) -> [UInt8] {
        [type.asciiValue ?? 0] + int32(UInt32(body.count + 4)) + body
    }

    private static func int32(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}
