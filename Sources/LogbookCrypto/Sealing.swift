import CSodium

/// Authenticated encryption: XChaCha20-Poly1305 (IETF) with a fresh random nonce for every
/// value, so one key may seal any number of values.
///
/// A sealed value is `nonce || ciphertext || tag`, `overhead` bytes longer than its
/// plaintext. It opens only under the same key and the same associated data: binding a value
/// to where it belongs (its event, its field) makes a copy moved elsewhere fail to open.
public enum Sealing {
    /// The nonce's length at the front of a sealed value.
    static var nonceByteCount: Int { Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES) }
    /// The authentication tag's length at the end of a sealed value.
    static var tagByteCount: Int { Int(crypto_aead_xchacha20poly1305_ietf_ABYTES) }

    /// How much longer a sealed value is than its plaintext: the nonce (24) and the tag (16).
    public static let overhead: Int = nonceByteCount + tagByteCount

    /// Seals `plaintext` under `key`, bound to `associatedData` (which is not encrypted and
    /// not included): `nonce || ciphertext+tag`.
    /// With `nonces`, the nonce comes from that source's pool (see `NonceSource`), else
    /// straight from the system's generator.
    public static func seal(
        _ plaintext: UnsafeRawBufferPointer, key: SecretKey, associatedData: UnsafeRawBufferPointer,
        nonces: NonceSource? = nil
    ) -> [UInt8] {
        let total = overhead + plaintext.count
        return [UInt8](unsafeUninitializedCapacity: total) { sealed, initialized in
            seal(
                plaintext, key: key, associatedData: associatedData, nonces: nonces,
                into: UnsafeMutableRawBufferPointer(sealed))
            initialized = total
        }
    }

    /// Seals `plaintext` under `key`, bound to `associatedData`, into the first
    /// `overhead + plaintext.count` bytes of `target` (which must have that room), so that
    /// a caller building a larger value needs no buffer of its own for it.
    public static func seal(
        _ plaintext: UnsafeRawBufferPointer, key: SecretKey, associatedData: UnsafeRawBufferPointer,
        nonces: NonceSource?, into target: UnsafeMutableRawBufferPointer
    ) {
        Sodium.require()
        let total = overhead + plaintext.count
        precondition(target.count >= total, "no room for the sealed value")
        let nonce = target.baseAddress!.assumingMemoryBound(to: UInt8.self)
        if let nonces {
            nonces.fill(nonce, count: nonceByteCount)
        } else {
            randombytes_buf(nonce, nonceByteCount)
        }
        var written: UInt64 = 0
        let result = key.withUnsafeBytes { keyBytes in
            crypto_aead_xchacha20poly1305_ietf_encrypt(
                nonce + nonceByteCount, &written,
                Sodium.bytes(plaintext), UInt64(plaintext.count),
                Sodium.bytes(associatedData), UInt64(associatedData.count),
                nil, nonce, Sodium.bytes(keyBytes)!)
        }
        precondition(result == 0 && written == UInt64(total - nonceByteCount), "sealing failed")
    }

    /// Seals `plaintext` under `key`, bound to `associatedData`: `nonce || ciphertext+tag`.
    public static func seal(
        _ plaintext: [UInt8], key: SecretKey, associatedData: [UInt8], nonces: NonceSource? = nil
    ) -> [UInt8] {
        plaintext.withUnsafeBytes { plaintext in
            associatedData.withUnsafeBytes { seal(plaintext, key: key, associatedData: $0, nonces: nonces) }
        }
    }

    /// The plaintext of a value `seal` made under `key` with the same `associatedData`.
    /// Throws `cannotOpen` for any other key or associated data, and for a value that was
    /// changed or cut short; nothing of such a value is returned.
    public static func open(
        _ sealed: UnsafeRawBufferPointer, key: SecretKey, associatedData: UnsafeRawBufferPointer
    ) throws(CryptoError) -> [UInt8] {
        try Sodium.check()
        guard sealed.count >= overhead else { throw .cannotOpen }
        var opened = false
        let plaintext = [UInt8](unsafeUninitializedCapacity: max(sealed.count - overhead, 1)) { target, initialized in
            opened = open(sealed, key: key, associatedData: associatedData, into: target.baseAddress!)
            initialized = opened ? sealed.count - overhead : 0
        }
        guard opened else { throw .cannotOpen }
        return plaintext
    }

    /// The plaintext of a value `seal` made under `key` with the same `associatedData`;
    /// throws `cannotOpen` otherwise.
    public static func open(_ sealed: [UInt8], key: SecretKey, associatedData: [UInt8]) throws(CryptoError) -> [UInt8] {
        let opened = sealed.withUnsafeBytes { sealed in
            associatedData.withUnsafeBytes { associatedData in
                Result { () throws(CryptoError) in try open(sealed, key: key, associatedData: associatedData) }
            }
        }
        return try opened.get()
    }

    /// Opens `sealed` into the first `sealed.count - overhead` bytes of `target` (which must
    /// have that room) and answers that count; throws `cannotOpen` as the other forms do,
    /// with nothing of the value left in `target`.
    public static func open(
        _ sealed: UnsafeRawBufferPointer, key: SecretKey, associatedData: UnsafeRawBufferPointer,
        into target: UnsafeMutableRawBufferPointer
    ) throws(CryptoError) -> Int {
        try Sodium.check()
        guard sealed.count >= overhead else { throw .cannotOpen }
        precondition(target.count >= sealed.count - overhead, "no room for the opened value")
        let opened = open(
            sealed, key: key, associatedData: associatedData,
            into: target.baseAddress!.assumingMemoryBound(to: UInt8.self))
        guard opened else { throw .cannotOpen }
        return sealed.count - overhead
    }

    /// Opens `sealed` (at least `overhead` bytes) into `target`, which has room for
    /// `sealed.count - overhead` bytes; answers whether it opened. On failure libsodium has
    /// already overwritten `target` with zeros.
    static func open(
        _ sealed: UnsafeRawBufferPointer, key: SecretKey, associatedData: UnsafeRawBufferPointer,
        into target: UnsafeMutablePointer<UInt8>
    ) -> Bool {
        precondition(sealed.count >= overhead)
        let nonce = Sodium.bytes(sealed)!
        var length: UInt64 = 0
        let result = key.withUnsafeBytes { keyBytes in
            crypto_aead_xchacha20poly1305_ietf_decrypt(
                target, &length, nil,
                nonce + nonceByteCount, UInt64(sealed.count - nonceByteCount),
                Sodium.bytes(associatedData), UInt64(associatedData.count),
                nonce, Sodium.bytes(keyBytes)!)
        }
        return result == 0 && length == UInt64(sealed.count - overhead)
    }
}
