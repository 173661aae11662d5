import CSodium

/// The service's master key. It is never used directly: three subkeys are derived from it
/// (`crypto_kdf_derive_from_key`, context `logbookk`), one per purpose — 1 wraps every
/// person's data key, 2 keys the hash of email addresses, 3 seals the check value that tells
/// whether a store was written under this key.
///
/// Wrapping binds a data key to its user id, so a wrapped key copied to another user does
/// not unwrap. Losing the master key loses every person's data; see `write(to:)`.
public struct MasterKey: Sendable {
    /// Wraps (seals) every person's data key.
    public let wrappingKey: SecretKey
    /// Keys the hash of email addresses (`KeyedHash`).
    public let emailHashKey: SecretKey
    /// Seals the check value.
    let checkKey: SecretKey
    /// The master key itself, kept only to write it to a key file.
    let key: SecretKey

    /// The master key `key`, with its subkeys derived.
    public init(_ key: SecretKey) {
        self.key = key
        wrappingKey = Self.subkey(1, of: key)
        emailHashKey = Self.subkey(2, of: key)
        checkKey = Self.subkey(3, of: key)
    }

    /// A new master key from the system's secure random source.
    public static func generate() -> MasterKey {
        MasterKey(SecretKey.random())
    }

    /// The subkey `id` of `key`, derived straight into its own storage.
    private static func subkey(_ id: UInt64, of key: SecretKey) -> SecretKey {
        let context: StaticString = "logbookk"
        precondition(context.utf8CodeUnitCount == Int(crypto_kdf_contextbytes()))
        return SecretKey(filling: { subkey in
            let result = key.withUnsafeBytes { master in
                context.utf8Start.withMemoryRebound(to: CChar.self, capacity: context.utf8CodeUnitCount) { context in
                    crypto_kdf_derive_from_key(
                        subkey.baseAddress!.assumingMemoryBound(to: UInt8.self), subkey.count, id, context,
                        Sodium.bytes(master)!)
                }
            }
            precondition(result == 0, "deriving a subkey failed")
        })
    }

    // MARK: The check value

    /// The plaintext of the check value.
    private static var checkText: [UInt8] { Array("logbook master key check".utf8) }
    /// The associated data of the check value.
    private static var checkAssociatedData: [UInt8] { Array("logbook-master-key-check".utf8) }

    /// A check value: a fixed text sealed under the check subkey. Stored beside the wrapped
    /// keys, it tells a later process whether it was given the same master key.
    public func makeCheck() -> [UInt8] {
        Sealing.seal(Self.checkText, key: checkKey, associatedData: Self.checkAssociatedData)
    }

    /// Whether `check` is a check value this master key made.
    public func verify(check: [UInt8]) -> Bool {
        guard let text = try? Sealing.open(check, key: checkKey, associatedData: Self.checkAssociatedData) else {
            return false
        }
        return text == Self.checkText
    }

    // MARK: Data keys

    /// The associated data that binds a wrapped data key to its user.
    private static func wrappingAssociatedData(_ userId: String) -> [UInt8] {
        Array("logbook-data-key:".utf8) + Array(userId.utf8)
    }

    /// `dataKey` sealed under the wrapping subkey, bound to `userId`.
    public func wrap(_ dataKey: SecretKey, userId: String) -> [UInt8] {
        let associatedData = Self.wrappingAssociatedData(userId)
        return dataKey.withUnsafeBytes { dataKey in
            associatedData.withUnsafeBytes { Sealing.seal(dataKey, key: wrappingKey, associatedData: $0) }
        }
    }

    /// The data key `wrap` sealed for `userId` under this master key, opened straight into
    /// its own storage. Throws `cannotOpen` for another user id, another master key, or a
    /// changed value.
    public func unwrap(_ wrapped: [UInt8], userId: String) throws(CryptoError) -> SecretKey {
        try Sodium.check()
        guard wrapped.count == Sealing.overhead + SecretKey.byteCount else { throw .cannotOpen }
        let associatedData = Self.wrappingAssociatedData(userId)
        let key = SecretKey(fillingIf: { target in
            wrapped.withUnsafeBytes { wrapped in
                associatedData.withUnsafeBytes { associatedData in
                    Sealing.open(
                        wrapped, key: wrappingKey, associatedData: associatedData,
                        into: target.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
        })
        guard let key else { throw .cannotOpen }
        return key
    }
}
