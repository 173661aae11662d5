/// A CURVE certificate as CZMQ's `zcert` keeps it: a public key, the secret key in a secret
/// certificate, and metadata (`name = "value"` pairs; Logbook reads `role`). The same value
/// is written as the public file `NAME` and the secret file `NAME_secret`.
public struct Certificate: Sendable, Equatable {
    /// One `name = "value"` line of the metadata section, in file order.
    public struct Property: Sendable, Equatable {
        public var name: String
        public var value: String

        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    public var publicKey: CurveKey
    /// Only in a secret certificate.
    public var secretKey: CurveKey?
    public var metadata: [Property]

    public init(publicKey: CurveKey, secretKey: CurveKey? = nil, metadata: [Property] = []) {
        self.publicKey = publicKey
        self.secretKey = secretKey
        self.metadata = metadata
    }

    /// The secret certificate of a key pair.
    public init(_ pair: CurveKeyPair, metadata: [Property] = []) {
        self.init(publicKey: pair.publicKey, secretKey: pair.secretKey, metadata: metadata)
    }

    /// The value of a metadata property, if the certificate has it.
    public func metadata(_ name: String) -> String? {
        metadata.first { $0.name == name }?.value
    }

    /// The key pair of a secret certificate; nil for a public one.
    public var keyPair: CurveKeyPair? {
        guard let secretKey else { return nil }
        return try? CurveKeyPair(secretKey: secretKey)
    }

    /// The public certificate of this one (the secret key left out).
    public var publicOnly: Certificate { Certificate(publicKey: publicKey, metadata: metadata) }
}
