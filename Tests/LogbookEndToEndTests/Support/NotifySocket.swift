import Foundation
import Glibc
import LogbookZMQ

/// systemd's side of `sd_notify`, played by a test: a unix datagram socket bound at a path
/// of its own (what `NOTIFY_SOCKET` names), read on a thread of its own. Each datagram is
/// kept with the monotonic time it was read; `onMessage` runs on that thread right after,
/// before the next read, so it can look at the world as it was when the message came.
final class NotifySocket: Sendable {
    /// One datagram: its text and when it was read (monotonic milliseconds).
    struct Message: Sendable {
        let text: String
        let receivedAt: Int64

        var isReady: Bool { text.split(separator: "\n").contains("READY=1") }
        var isWatchdog: Bool { text.split(separator: "\n").contains("WATCHDOG=1") }
        var isStopping: Bool { text.split(separator: "\n").contains("STOPPING=1") }
    }

    let path: String
    private let received = Shared<[Message]>([])
    private let stopped = Shared(false)
    private let reader: OwnedThread
    private let descriptor: Int32

    init(path: String, onMessage: @escaping @Sendable (Message) -> Void = { _ in }) throws {
        self.path = path
        unlink(path)
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw NotifySocketError.cannotBind(path, errno) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.utf8.count < capacity else {
            close(fd)
            throw NotifySocketError.cannotBind(path, ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8) + [0])
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else {
            let error = errno
            close(fd)
            throw NotifySocketError.cannotBind(path, error)
        }
        descriptor = fd
        let received = self.received
        let stopped = self.stopped
        reader = OwnedThread(name: "e2e-notify") {
            var buffer = [UInt8](repeating: 0, count: 4_096)
            while !stopped.value {
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 50) > 0 else { continue }
                let count = recv(fd, &buffer, buffer.count, 0)
                guard count > 0 else { continue }
                let message = Message(
                    text: String(decoding: buffer[..<count], as: UTF8.self), receivedAt: MonotonicClock.milliseconds())
                onMessage(message)
                received.update { $0.append(message) }
            }
        }
    }

    deinit {
        stopped.update { $0 = true }
        reader.join()
        close(descriptor)
        unlink(path)
    }

    /// Every message so far, in the order read.
    var messages: [Message] { received.value }

    /// The environment that makes a `logbook run` process report here, with a watchdog of
    /// `watchdogMilliseconds` when given.
    func environment(watchdogMilliseconds: Int? = nil) -> [String: String] {
        var environment = ["NOTIFY_SOCKET": path]
        if let watchdogMilliseconds { environment["WATCHDOG_USEC"] = "\(watchdogMilliseconds * 1_000)" }
        return environment
    }
}

enum NotifySocketError: Error {
    case cannotBind(String, Int32)
}
