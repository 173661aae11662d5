import LogbookCrypto
import Testing

/// `Sealing`: XChaCha20-Poly1305 with a fresh nonce per value. A value opens only under its
/// key and its associated data, and unchanged.
@Suite("Sealing: authenticated encryption bound to its associated data")
struct SealingTests {
    private let key = SecretKey.random()
    private let associatedData = TestBytes.utf8("event 7/email")

    @Test("A sealed value opens to its plaintext and is overhead bytes longer", arguments: [0, 1, 100, 65_536])
    func roundTrip(count: Int) throws {
        let plaintext = TestBytes.pattern(count)
        let sealed = Sealing.seal(plaintext, key: key, associatedData: associatedData)
        #expect(Sealing.overhead == 40)
        #expect(sealed.count == count + Sealing.overhead)
        #expect(try Sealing.open(sealed, key: key, associatedData: associatedData) == plaintext)
    }

    @Test("The raw-buffer forms seal and open the same values as the array forms")
    func rawBuffers() throws {
        let plaintext = TestBytes.pattern(33)
        let sealed = plaintext.withUnsafeBytes { plaintext in
            associatedData.withUnsafeBytes { Sealing.seal(plaintext, key: key, associatedData: $0) }
        }
        #expect(try Sealing.open(sealed, key: key, associatedData: associatedData) == plaintext)
        let arraySealed = Sealing.seal(plaintext, key: key, associatedData: associatedData)
        let opened = try arraySealed.withUnsafeBytes { sealed in
            try associatedData.withUnsafeBytes { try Sealing.open(sealed, key: key, associatedData: $0) }
        }
        #expect(opened == plaintext)
    }

    @Test("The in-place forms seal into and open into the caller's memory, and write nothing past the value")
    func inPlace() throws {
        let plaintext = TestBytes.pattern(21)
        var target = [UInt8](repeating: 0xEE, count: Sealing.overhead + plaintext.count + 8)
        target.withUnsafeMutableBytes { target in
            plaintext.withUnsafeBytes { plaintext in
                associatedData.withUnsafeBytes {
                    Sealing.seal(plaintext, key: key, associatedData: $0, nonces: nil, into: target)
                }
            }
        }
        #expect(target.suffix(8).allSatisfy { $0 == 0xEE })
        let sealed = Array(target.prefix(Sealing.overhead + plaintext.count))
        #expect(try Sealing.open(sealed, key: key, associatedData: associatedData) == plaintext)
        var opened = [UInt8](repeating: 0xEE, count: plaintext.count + 8)
        let count = try opened.withUnsafeMutableBytes { opened in
            try sealed.withUnsafeBytes { sealed in
                try associatedData.withUnsafeBytes {
                    try Sealing.open(sealed, key: key, associatedData: $0, into: opened)
                }
            }
        }
        #expect(count == plaintext.count)
        #expect(Array(opened.prefix(count)) == plaintext)
        #expect(opened.suffix(8).allSatisfy { $0 == 0xEE })
        #expect(throws: CryptoError.cannotOpen) {
            try opened.withUnsafeMutableBytes { opened in
                try sealed.withUnsafeBytes { sealed in
                    try [UInt8]().withUnsafeBytes {
                        try Sealing.open(sealed, key: key, associatedData: $0, into: opened)
                    }
                }
            }
        }
        #expect(opened.prefix(plaintext.count).allSatisfy { $0 == 0 }, "nothing of a value that did not open is left")
    }

    @Test("Sealing the same plaintext twice gives different nonces and different values")
    func freshNonces() {
        let plaintext = TestBytes.utf8("ada@example.org")
        let values = (0..<64).map { _ in Sealing.seal(plaintext, key: key, associatedData: associatedData) }
        #expect(Set(values.map { Array($0.prefix(24)) }).count == values.count)
        #expect(Set(values).count == values.count)
    }

    @Test("Nonces from a shared source are all different, across its refills, and the values open")
    func pooledNonces() throws {
        let nonces = NonceSource()
        let plaintext = TestBytes.utf8("ada@example.org")
        // More nonces than one refill holds, so the pool is drawn again.
        let values = (0..<1_000).map { _ in
            Sealing.seal(plaintext, key: key, associatedData: associatedData, nonces: nonces)
        }
        #expect(Set(values.map { Array($0.prefix(24)) }).count == values.count)
        #expect(!values.contains { $0.prefix(24).allSatisfy { $0 == 0 } })
        for value in values.prefix(10) + values.suffix(10) {
            #expect(try Sealing.open(value, key: key, associatedData: associatedData) == plaintext)
        }
    }

    @Test("A value does not open under another key")
    func wrongKey() {
        let sealed = Sealing.seal(TestBytes.utf8("Ada"), key: key, associatedData: associatedData)
        #expect(throws: CryptoError.cannotOpen) {
            try Sealing.open(sealed, key: SecretKey.random(), associatedData: associatedData)
        }
    }

    @Test("A value moved to another event or field, or stripped of its associated data, does not open")
    func otherAssociatedData() {
        let sealed = Sealing.seal(TestBytes.utf8("Ada"), key: key, associatedData: associatedData)
        for other in ["event 8/email", "event 7/name", "event 7/email ", ""] {
            #expect(throws: CryptoError.cannotOpen) {
                try Sealing.open(sealed, key: key, associatedData: TestBytes.utf8(other))
            }
        }
    }

    @Test("Flipping any one bit (nonce, ciphertext or tag) makes a value not open")
    func flippedBits() {
        let sealed = Sealing.seal(TestBytes.pattern(16), key: key, associatedData: associatedData)
        for index in sealed.indices {
            for bit in 0..<8 {
                var changed = sealed
                changed[index] ^= 1 << bit
                #expect(throws: CryptoError.cannotOpen) {
                    try Sealing.open(changed, key: key, associatedData: associatedData)
                }
            }
        }
    }

    @Test("A value cut short at any length, or grown by a byte, does not open")
    func truncated() {
        let sealed = Sealing.seal(TestBytes.pattern(16), key: key, associatedData: associatedData)
        for length in 0..<sealed.count {
            #expect(throws: CryptoError.cannotOpen) {
                try Sealing.open(Array(sealed.prefix(length)), key: key, associatedData: associatedData)
            }
        }
        #expect(throws: CryptoError.cannotOpen) {
            try Sealing.open(sealed + [0], key: key, associatedData: associatedData)
        }
    }

    /// Made with an independent implementation (HChaCha20, then the IETF ChaCha20-Poly1305 of
    /// Python's `cryptography`) with the nonce 0x40 … 0x57: the format is nonce || ciphertext+tag.
    @Test("A value sealed by another implementation of XChaCha20-Poly1305 opens")
    func knownAnswer() throws {
        let key = try SecretKey(bytes: TestBytes.knownKey)
        let sealed = TestBytes.hex(
            "404142434445464748494a4b4c4d4e4f5051525354555657955d64509c8f0f73e395e4db8fa004f6f3fac8bc723423"
                + "f60f1f92376e3a36dc3930b96e0c2fab53c06de4c0b278")
        let plaintext = try Sealing.open(sealed, key: key, associatedData: associatedData)
        #expect(plaintext == TestBytes.utf8("Ada Lovelace <ada@example.org>"))
    }
}
