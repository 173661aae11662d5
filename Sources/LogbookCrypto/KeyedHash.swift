import CSodium

/// Keyed BLAKE2b (`crypto_generichash` with a key): the same message and key always give the
/// same hash, and without the key the hash cannot be computed nor a message guessed from it.
public enum KeyedHash {
    /// The keyed BLAKE2b hash of `message`, `byteCount` long (16 to 64 bytes; 32 by default).
    public static func hash(_ message: [UInt8], key: SecretKey, byteCount: Int = 32) -> [UInt8] {
        Sodium.require()
        precondition(
            byteCount >= Int(crypto_generichash_bytes_min()) && byteCount <= Int(crypto_generichash_bytes_max()),
            "a keyed hash is 16 to 64 bytes long")
        return [UInt8](unsafeUninitializedCapacity: byteCount) { hash, initialized in
            let result = message.withUnsafeBytes { message in
                key.withUnsafeBytes { keyBytes in
                    crypto_generichash(
                        hash.baseAddress!, byteCount, Sodium.bytes(message), UInt64(message.count),
                        Sodium.bytes(keyBytes), keyBytes.count)
                }
            }
            precondition(result == 0, "keyed hashing failed")
            initialized = byteCount
        }
    }
}
