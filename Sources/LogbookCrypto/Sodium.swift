import CSodium

/// libsodium's one-time set-up, and the small helpers every file of this target shares.
///
/// `sodium_init` runs once, on first use of `ready`; each public entry point checks it
/// before calling into libsodium. This is the target's only global state; its other
/// static properties are constants.
enum Sodium {
    /// Whether `sodium_init` succeeded; it runs at most once per process.
    static let ready: Bool = sodium_init() >= 0

    /// Stops the process when libsodium could not be set up: for the entry points that
    /// cannot throw (failing to initialise means the system has no usable randomness).
    static func require() {
        precondition(ready, "libsodium could not be initialised (sodium_init failed)")
    }

    /// Throws `unavailable` when libsodium could not be set up: for the throwing entry points.
    static func check() throws(CryptoError) {
        guard ready else { throw .unavailable("sodium_init failed") }
    }

    /// Overwrites `bytes` with zeros in a way the compiler does not optimise away.
    static func zero(_ bytes: UnsafeMutableRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        sodium_memzero(base, bytes.count)
    }

    /// Overwrites the elements of `array` with zeros (its storage, in place).
    static func zero<Element: BitwiseCopyable>(_ array: inout [Element]) {
        array.withUnsafeMutableBytes { zero($0) }
    }

    /// The bytes of a raw buffer as the C type libsodium takes; nil for an empty buffer.
    static func bytes(_ buffer: UnsafeRawBufferPointer) -> UnsafePointer<UInt8>? {
        buffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
    }
}
