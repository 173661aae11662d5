import Glibc
import LogbookZMQ

/// Binding an endpoint again right after the socket that held it was closed: libzmq closes
/// a listener on its I/O thread, later. A `tcp://` bind meanwhile fails with EADDRINUSE and
/// is tried again; an `ipc://` file is unlinked by the old listener when it goes, so the new
/// bind waits until the file is gone (else the old listener would unlink the new file).
enum EndpointRebinding {
    static let pauseMicroseconds: UInt32 = 5_000

    static func bind(_ socket: borrowing ZMQSocket, _ endpoint: String, retryingFor milliseconds: Int) throws(ZMQError)
    {
        let deadline = MonotonicClock.milliseconds() + Int64(milliseconds)
        if milliseconds > 0, endpoint.hasPrefix("ipc://") {
            let path = String(endpoint.dropFirst("ipc://".count))
            while access(path, F_OK) == 0 && MonotonicClock.milliseconds() < deadline { usleep(pauseMicroseconds) }
        }
        while true {
            do {
                return try socket.bind(endpoint)
            } catch  where error.errno == EADDRINUSE && MonotonicClock.milliseconds() < deadline {
                usleep(pauseMicroseconds)
            }
        }
    }
}
