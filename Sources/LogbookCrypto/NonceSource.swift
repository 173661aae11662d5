import CSodium
import Synchronization

/// Random nonces drawn from the operating system's generator (libsodium's
/// `randombytes_buf`) a few thousand bytes at a time and handed out in order, so sealing
/// many values costs one system call per batch of nonces instead of one per value. Every
/// nonce is still random and used once. Safe to share between threads.
public final class NonceSource: Sendable {
    /// How many random bytes one refill draws.
    static let refillByteCount = 4_096

    private let pool = Mutex(Pool())

    private struct Pool {
        var bytes = [UInt8](repeating: 0, count: NonceSource.refillByteCount)
        var next = NonceSource.refillByteCount
    }

    public init() {}

    /// Writes `count` fresh random bytes (at most `refillByteCount`) to `target`.
    func fill(_ target: UnsafeMutablePointer<UInt8>, count: Int) {
        precondition(count <= Self.refillByteCount, "a nonce is far shorter than a refill")
        pool.withLock { pool in
            if pool.next + count > pool.bytes.count {
                pool.bytes.withUnsafeMutableBytes { bytes in
                    guard let base = bytes.baseAddress else { return }
                    randombytes_buf(base, bytes.count)
                }
                pool.next = 0
            }
            let start = pool.next
            pool.bytes.withUnsafeMutableBufferPointer { bytes in
                guard let base = bytes.baseAddress else { return }
                target.update(from: base + start, count: count)
                // What was handed out is not kept.
                sodium_memzero(base + start, count)
            }
            pool.next += count
        }
    }
}
