import Glibc
import LogbookApplication
import Synchronization

/// Random (version 4, RFC 9562) UUIDs for event ids, in lowercase:
/// `xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx` with `V` one of `8 9 a b`. The same ids
/// Foundation's `UUID()` gives, at a fraction of the cost: the kernel's random bytes are
/// read in blocks (one `getrandom`, through `arc4random_buf`, serves many ids, where
/// `UUID()` made a system call or more per id), and the text is written by hand. Safe to share between threads.
final class RandomEventIds: IDGenerator {
    private let pool = Mutex(RandomBytePool())

    func newEventId() -> String {
        let random = pool.withLock { $0.next16() }
        return Self.text(of: random)
    }

    /// The UUID text of `random` with its version (4) and variant (`10xx`) bits set.
    static func text(of random: (UInt64, UInt64)) -> String {
        // Bits 48–51 (the 13th hex digit) hold the version; bits 64–65 the variant.
        let high = random.0 & 0xFFFF_FFFF_FFFF_0FFF | 0x0000_0000_0000_4000
        let low = random.1 & 0x3FFF_FFFF_FFFF_FFFF | 0x8000_0000_0000_0000
        return String(unsafeUninitializedCapacity: 36) { text in
            var at = 0
            func hex(_ value: UInt64, digits: Int) {
                var shift = (digits - 1) * 4
                while shift >= 0 {
                    text[at] = hexDigits[Int(truncatingIfNeeded: value >> UInt64(shift)) & 0xF]
                    at += 1
                    shift -= 4
                }
            }
            func dash() {
                text[at] = UInt8(ascii: "-")
                at += 1
            }
            hex(high >> 32, digits: 8)
            dash()
            hex(high >> 16, digits: 4)
            dash()
            hex(high, digits: 4)
            dash()
            hex(low >> 48, digits: 4)
            dash()
            hex(low, digits: 12)
            return at
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}

/// Random bytes from the kernel, fetched a buffer at a time.
private struct RandomBytePool: ~Copyable {
    private static let size = 4096
    private var buffer = [UInt8](repeating: 0, count: RandomBytePool.size)
    private var used = RandomBytePool.size

    /// The next 16 random bytes, as two words.
    mutating func next16() -> (UInt64, UInt64) {
        if used + 16 > Self.size { refill() }
        defer { used += 16 }
        return buffer.withUnsafeBytes { bytes in
            (
                bytes.loadUnaligned(fromByteOffset: used, as: UInt64.self),
                bytes.loadUnaligned(fromByteOffset: used + 8, as: UInt64.self)
            )
        }
    }

    /// glibc's `arc4random_buf` reads the kernel's generator (`getrandom`) and never fails:
    /// it aborts the process rather than return guessable bytes.
    private mutating func refill() {
        buffer.withUnsafeMutableBytes { bytes in
            guard let start = bytes.baseAddress else { return }
            arc4random_buf(start, bytes.count)
        }
        used = 0
    }
}
