import Glibc
import LogbookCommandLine

/// An exclusive claim on a file for as long as this process lives (`flock`), so that two
/// processes never serve the same store: the kernel drops it when the process ends, however
/// it ends. The file holds the claimant's pid, for the refusal's message.
final class ServingLock: Sendable {
    private let descriptor: Int32

    /// Claims `path` (created if missing); refuses with the holder's pid when another
    /// process holds it. `what` names the store in the message.
    init(path: String, what: String) throws(CLIError) {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw .unavailable("cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno
            var bytes = [UInt8](repeating: 0, count: 32)
            let count = pread(descriptor, &bytes, bytes.count, 0)
            close(descriptor)
            guard reason == EWOULDBLOCK else {
                throw .unavailable("cannot lock \(path): \(String(cString: strerror(reason)))")
            }
            let holder = String(decoding: bytes.prefix(max(0, count)), as: UTF8.self)
            throw .unavailable("another process (pid \(holder)) serves \(what); stop it first, one may serve it")
        }
        let pid = Array(String(getpid()).utf8)
        _ = ftruncate(descriptor, 0)
        _ = pwrite(descriptor, pid, pid.count, 0)
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }
}
