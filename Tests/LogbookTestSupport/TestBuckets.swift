public import LogbookApplication
import LogbookCrypto
public import LogbookDomain
public import LogbookMemory

extension EmailBucketing {
    /// How tests that need no vault spread addresses over buckets: a 16-bit FNV-1a hash of
    /// the normalised address (the service's is keyed by its master key).
    public static let forTests = EmailBucketing { email in
        var hash: UInt32 = 0x811C_9DC5
        for byte in email.value.utf8 { hash = (hash ^ UInt32(byte)) &* 0x0100_0193 }
        let folded = (hash >> 16) ^ (hash & 0xFFFF)
        let digits = Array("0123456789abcdef")
        let text = String((0..<4).map { digits[Int(folded >> (12 - 4 * UInt32($0))) & 0xF] })
        guard let bucket = try? EmailBucket(text) else { preconditionFailure("four hex digits are a bucket") }
        return bucket
    }
}

extension PersonalDataVault {
    /// A vault for tests: a new master key over a key store in memory.
    public static func forTests(keyStore: any PersonKeyStore = InMemoryPersonKeyStore()) -> PersonalDataVault {
        do {
            return try PersonalDataVault(master: MasterKey.generate(), keyStore: keyStore)
        } catch {
            preconditionFailure("a new key store takes any master key: \(error)")
        }
    }
}
