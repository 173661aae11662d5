import CSodium

/// A 32-byte secret key (the key size of XChaCha20-Poly1305 and of keyed BLAKE2b).
///
/// Copies share one allocation, which is overwritten with zeros (`sodium_memzero`) when the
/// last copy goes. Comparison runs in constant time (`sodium_memcmp`). Neither `description`
/// nor reflection shows the bytes.
public struct SecretKey: Sendable, Equatable {
    /// The length of every key, in bytes.
    public static let byteCount = 32

    /// The key's bytes, in memory of their own. Written only while the key is made, then
    /// read-only until `deinit` zeroes them.
    private final class Storage: @unchecked Sendable {
        let bytes: UnsafeMutableRawBufferPointer

        init() {
            bytes = .allocate(byteCount: SecretKey.byteCount, alignment: 16)
            bytes.initializeMemory(as: UInt8.self, repeating: 0)
        }

        deinit {
            Sodium.zero(bytes)
            bytes.deallocate()
        }
    }

    private let storage: Storage

    /// A key whose bytes `fill` writes, in place (so that no other buffer holds them);
    /// nil when `fill` answers false (the bytes it wrote are zeroed).
    init?(fillingIf fill: (UnsafeMutableRawBufferPointer) -> Bool) {
        Sodium.require()
        let storage = Storage()
        guard fill(storage.bytes) else { return nil }
        self.storage = storage
    }

    /// A key whose bytes `fill` writes, in place.
    init(filling fill: (UnsafeMutableRawBufferPointer) -> Void) {
        self.init(fillingIf: { bytes in
            fill(bytes)
            return true
        })!
    }

    /// A new key from the system's secure random source (`randombytes_buf`).
    public static func random() -> SecretKey {
        SecretKey(filling: { randombytes_buf($0.baseAddress!, $0.count) })
    }

    /// A key with these bytes; throws `wrongKeyLength` unless there are exactly `byteCount`.
    /// The caller still owns `bytes` and should zero them when done.
    public init(bytes: [UInt8]) throws(CryptoError) {
        guard bytes.count == Self.byteCount else { throw .wrongKeyLength(bytes.count) }
        try Sodium.check()
        self.init(filling: { target in bytes.withUnsafeBytes { target.copyMemory(from: $0) } })
    }

    /// Lends the key's bytes to `body`; they must not be kept beyond it.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withExtendedLifetime(storage) { try body(UnsafeRawBufferPointer(storage.bytes)) }
    }

    /// A copy of the key's bytes. The copy is the caller's to protect and to zero.
    public var bytes: [UInt8] {
        withUnsafeBytes { Array($0) }
    }

    /// Whether the two keys have the same bytes, compared in constant time.
    public static func == (lhs: SecretKey, rhs: SecretKey) -> Bool {
        if lhs.storage === rhs.storage { return true }
        return lhs.withUnsafeBytes { left in
            rhs.withUnsafeBytes { right in sodium_memcmp(left.baseAddress!, right.baseAddress!, byteCount) == 0 }
        }
    }
}
