/// Why a cryptographic operation or a master key file could not be used. Descriptions are
/// one line each and never contain key material (nor any text a key file holds).
public enum CryptoError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A sealed value did not open: wrong key, other associated data, or damaged or cut short.
    case cannotOpen
    /// A secret key was given with this many bytes instead of `SecretKey.byteCount`.
    case wrongKeyLength(Int)
    /// A master key file's text is not a key file; the reason is one line.
    case malformedKeyFile(String)
    /// A master key file could not be opened or read; the reason is the system's error text.
    case unreadableKeyFile(path: String, reason: String)
    /// A master key file could not be created, written or made durable.
    case unwritableKeyFile(path: String, reason: String)
    /// libsodium could not be initialised.
    case unavailable(String)

    public var description: String {
        switch self {
        case .cannotOpen:
            "a sealed value does not open (wrong key, other associated data, or damaged)"
        case .wrongKeyLength(let count): "a secret key is \(SecretKey.byteCount) bytes, not \(count)"
        case .malformedKeyFile(let reason): "malformed master key file: \(reason)"
        case .unreadableKeyFile(let path, let reason): "cannot read the master key file \(path): \(reason)"
        case .unwritableKeyFile(let path, let reason): "cannot write the master key file \(path): \(reason)"
        case .unavailable(let reason): "libsodium is unavailable: \(reason)"
        }
    }
}
