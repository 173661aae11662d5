import CZeroMQ
import Glibc

/// A 32-byte CURVE key (public or secret), as libzmq's socket options take it; its text
/// form is 40 characters of Z85.
public struct CurveKey: Sendable, Hashable {
    public static let byteCount = 32
    public static let textLength = 40

    public let bytes: [UInt8]

    /// A key from its 32 bytes.
    public init(bytes: [UInt8]) throws(CurveKeyError) {
        guard bytes.count == Self.byteCount else { throw .length(bytes.count) }
        self.bytes = bytes
    }

    /// A key from its 40 Z85 characters.
    public init(z85 text: String) throws(CurveKeyError) {
        let count = text.utf8.count
        guard count == Self.textLength else { throw .textLength(count) }
        do {
            bytes = try Z85.decode(text)
        } catch {
            throw .z85(error)
        }
    }

    /// The 40 Z85 characters.
    public var z85: String { Z85.encode(bytes) }
}

/// Why bytes or a text are not a CURVE key.
public enum CurveKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    case length(Int)
    case textLength(Int)
    case z85(Z85Error)

    public var description: String {
        switch self {
        case .length(let count): "a CURVE key is 32 bytes, not \(count)"
        case .textLength(let count): "a CURVE key is 40 Z85 characters, not \(count)"
        case .z85(let error): "not Z85: \(error)"
        }
    }
}

/// A long-term CURVE key pair: the public key others know this end by, and its secret.
public struct CurveKeyPair: Sendable, Equatable {
    public let publicKey: CurveKey
    public let secretKey: CurveKey

    /// The pair whose secret is `secretKey` (the public key is derived from it, by libzmq).
    public init(secretKey: CurveKey) throws(ZMQError) {
        var secretText = Array(secretKey.z85.utf8CString)
        var publicText = [CChar](repeating: 0, count: CurveKey.textLength + 1)
        guard zmq_curve_public(&publicText, &secretText) == 0 else { throw ZMQError.last("zmq_curve_public") }
        let text = String(decoding: publicText.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let derived = try? CurveKey(z85: text) else { throw ZMQError("zmq_curve_public", errno: EINVAL) }
        publicKey = derived
        self.secretKey = secretKey
    }

    /// A new random pair, from libzmq (libsodium underneath).
    public static func generate() throws(ZMQError) -> CurveKeyPair {
        var publicText = [CChar](repeating: 0, count: CurveKey.textLength + 1)
        var secretText = [CChar](repeating: 0, count: CurveKey.textLength + 1)
        guard zmq_curve_keypair(&publicText, &secretText) == 0 else { throw ZMQError.last("zmq_curve_keypair") }
        let text = String(decoding: secretText.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let secret = try? CurveKey(z85: text) else { throw ZMQError("zmq_curve_keypair", errno: EINVAL) }
        return try CurveKeyPair(secretKey: secret)
    }
}
