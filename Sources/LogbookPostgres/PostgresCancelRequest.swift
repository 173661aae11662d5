import CPostgres
import Glibc

/// A request to cancel what one connection's backend is running, sent from a thread of its
/// own: libpq's `PQcancel` opens a new connection to the server and has no timeout of its
/// own, so a server that cannot be reached would otherwise hold the caller for as long as
/// the system takes to give up connecting. The request holds a copy of what it needs, so
/// the connection may be closed meanwhile. Best effort: a cancel that cannot be delivered
/// changes nothing, and the caller goes on waiting for its answer or for the connection to fail.
struct PostgresCancelRequest {
    private let request: OpaquePointer

    /// The request for `connection`'s backend, or nil when libpq cannot make one (no connection).
    init?(_ connection: OpaquePointer) {
        guard let request = PQgetCancel(connection) else { return nil }
        self.request = request
    }

    /// Sends the request on a detached thread, which frees it once sent.
    func send() {
        var thread = pthread_t()
        let started = pthread_create(
            &thread, nil,
            { context in
                guard let context else { return nil }
                let request = OpaquePointer(context)
                var reason = [CChar](repeating: 0, count: 256)
                _ = PQcancel(request, &reason, Int32(reason.count))
                PQfreeCancel(request)
                return nil
            }, UnsafeMutableRawPointer(request))
        if started == 0 {
            pthread_detach(thread)
        } else {
            PQfreeCancel(request)
        }
    }
}
