/// CURVE on a client's sockets: the client's own key pair (its secret certificate,
/// `--curve-key`) and the server's public key (`--server-key`), set on each socket before
/// it connects. A server admits the client only if its public key is in the allow-list.
public struct CurveClientKeys: Sendable, Equatable {
    public let keys: CurveKeyPair
    public let serverKey: CurveKey

    public init(keys: CurveKeyPair, serverKey: CurveKey) {
        self.keys = keys
        self.serverKey = serverKey
    }

    /// Reads the client's secret certificate and the server's certificate (public or secret;
    /// only its public key is used).
    public init(clientSecretCertificate: String, serverCertificate: String) throws(KeyFileError) {
        let client = try KeyFiles.secretCertificate(at: clientSecretCertificate)
        guard let pair = client.keyPair else { throw KeyFileError(clientSecretCertificate, .notSecret) }
        self.init(keys: pair, serverKey: try KeyFiles.certificate(at: serverCertificate).publicKey)
    }

    /// Makes `socket` a CURVE client of the server. Call before `connect`.
    public func secureClient(_ socket: borrowing ZMQSocket) throws(ZMQError) {
        try socket.set(.curveServerKey, bytes: serverKey.bytes)
        try socket.set(.curvePublicKey, bytes: keys.publicKey.bytes)
        try socket.set(.curveSecretKey, bytes: keys.secretKey.bytes)
    }
}

extension ZMQSocket {
    /// Makes this socket a CURVE client with `keys`; does nothing without keys (security off).
    public func secure(_ keys: CurveClientKeys?) throws(ZMQError) {
        try keys?.secureClient(self)
    }
}
