import CSodium

/// Base64 in its URL-safe alphabet without padding (no `+`, `/` nor `=`), so an encoded value
/// is safe in file names, URLs, JSON and command lines. Decoding is strict: it accepts only
/// what `encode` writes, with no whitespace, padding, or anything after the value.
public enum Base64 {
    /// libsodium's variant: URL-safe alphabet, no padding.
    static var variant: Int32 { sodium_base64_VARIANT_URLSAFE_NO_PADDING }

    /// The encoding of `bytes`.
    public static func encode(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBytes { encode($0) }
    }

    /// The encoding of `bytes`, written straight into the string (no other buffer holds it).
    public static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
        Sodium.require()
        let length = encodedByteCount(bytes.count)
        return String(unsafeUninitializedCapacity: length + 1) { text in
            encode(bytes, into: text)
            return length
        }
    }

    /// The length of `byteCount` bytes' encoding (without a terminating zero).
    public static func encodedByteCount(_ byteCount: Int) -> Int {
        sodium_base64_encoded_len(byteCount, variant) - 1
    }

    /// Writes the encoding of `bytes` and a terminating zero into `text`, which has room for
    /// `encodedByteCount(bytes.count) + 1` bytes.
    public static func encode(_ bytes: UnsafeRawBufferPointer, into text: UnsafeMutableBufferPointer<UInt8>) {
        Sodium.require()
        let length = encodedByteCount(bytes.count) + 1
        precondition(text.count >= length)
        text.withMemoryRebound(to: CChar.self) { text in
            _ = sodium_bin2base64(text.baseAddress!, length, Sodium.bytes(bytes), bytes.count, variant)
        }
    }

    /// The bytes `text` encodes, or nil when it is not exactly an encoding `encode` writes.
    public static func decode(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { decode($0) }
    }

    /// The bytes `text` (UTF-8) encodes, or nil when it is not exactly an encoding `encode`
    /// writes. When decoding fails, whatever was decoded so far is zeroed.
    public static func decode(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard !text.isEmpty else { return [] }
        var decoded = false
        let bytes = [UInt8](unsafeUninitializedCapacity: decodedCapacity(text.count)) { target, initialized in
            let length = decode(text, into: UnsafeMutableRawBufferPointer(target))
            decoded = length != nil
            initialized = length ?? 0
        }
        return decoded ? bytes : nil
    }

    /// Room enough for what an encoding of `encodedCount` bytes decodes to.
    public static func decodedCapacity(_ encodedCount: Int) -> Int {
        encodedCount / 4 * 3 + 3
    }

    /// Decodes `text` (UTF-8) into `target`, which has room for `decodedCapacity(text.count)`
    /// bytes, and answers how many it wrote; nil when `text` is not exactly an encoding
    /// `encode` writes, with whatever was decoded so far zeroed.
    public static func decode(_ text: UnsafeBufferPointer<UInt8>, into target: UnsafeMutableRawBufferPointer)
        -> Int?
    {
        Sodium.require()
        guard let encoded = text.baseAddress, !text.isEmpty else { return 0 }
        let capacity = decodedCapacity(text.count)
        precondition(target.count >= capacity, "no room for the decoded bytes")
        var length = 0
        let result = encoded.withMemoryRebound(to: CChar.self, capacity: text.count) { encoded in
            sodium_base642bin(
                target.baseAddress!.assumingMemoryBound(to: UInt8.self), capacity, encoded, text.count, nil, &length,
                nil, variant)
        }
        guard result == 0 else {
            Sodium.zero(UnsafeMutableRawBufferPointer(rebasing: target[..<capacity]))
            return nil
        }
        return length
    }
}

/// Lower-case hexadecimal, for fingerprints and diagnostics (`sodium_bin2hex`, constant time).
public enum Hex {
    /// Two lower-case hex digits per byte.
    public static func encode(_ bytes: [UInt8]) -> String {
        Sodium.require()
        let length = bytes.count * 2
        return String(unsafeUninitializedCapacity: length + 1) { text in
            text.withMemoryRebound(to: CChar.self) { text in
                bytes.withUnsafeBytes { bytes in
                    _ = sodium_bin2hex(text.baseAddress!, length + 1, Sodium.bytes(bytes), bytes.count)
                }
            }
            return length
        }
    }
}
