import LogbookCrypto
import Testing

/// `SecretKey`, `KeyedHash`, `Base64` and `Hex`: the values and encodings around the sealing.
@Suite("Keys, keyed hashes and encodings")
struct EncodingTests {
    // MARK: SecretKey

    @Test("A secret key takes exactly 32 bytes", arguments: [0, 16, 31, 33, 64])
    func keyLength(count: Int) {
        #expect(throws: CryptoError.wrongKeyLength(count)) { try SecretKey(bytes: TestBytes.pattern(count)) }
    }

    @Test("A key is equal to a key with the same bytes and to its copies, and to no random key")
    func keyEquality() throws {
        let key = try SecretKey(bytes: TestBytes.knownKey)
        let copy = key
        #expect(key == copy)
        #expect(try SecretKey(bytes: key.bytes) == key)
        #expect(key.bytes == TestBytes.knownKey)
        #expect(key.withUnsafeBytes { Array($0) } == TestBytes.knownKey)
        #expect(SecretKey.random() != key)
        #expect(SecretKey.random() != SecretKey.random())
        #expect(SecretKey.byteCount == 32)
    }

    @Test("A key's description shows none of its bytes")
    func keyDescription() throws {
        let key = try SecretKey(bytes: TestBytes.knownKey)
        let shown = String(describing: key) + String(reflecting: key)
        #expect(!shown.contains(Hex.encode(TestBytes.knownKey)))
        #expect(!shown.contains(Base64.encode(TestBytes.knownKey)))
        #expect(!shown.contains("0, 1, 2, 3"))
    }

    // MARK: KeyedHash

    @Test("A keyed hash is the same for the same message and key, and differs across keys and messages")
    func keyedHashDeterministic() {
        let key = SecretKey.random()
        let message = TestBytes.utf8("ada@example.org")
        let hash = KeyedHash.hash(message, key: key)
        #expect(hash.count == 32)
        #expect(KeyedHash.hash(message, key: key) == hash)
        #expect(KeyedHash.hash(message, key: SecretKey.random()) != hash)
        #expect(KeyedHash.hash(TestBytes.utf8("ada@example.net"), key: key) != hash)
        #expect(KeyedHash.hash(message, key: key, byteCount: 16).count == 16)
        #expect(KeyedHash.hash(message, key: key, byteCount: 64).count == 64)
        #expect(KeyedHash.hash([], key: key).count == 32)
    }

    /// The answers come from Python's `hashlib.blake2b` (with and without `key=`).
    @Test("A keyed hash is keyed BLAKE2b, not the unkeyed hash")
    func keyedHashKnownAnswer() throws {
        let key = try SecretKey(bytes: TestBytes.knownKey)
        let unkeyed = TestBytes.hex("bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319")
        #expect(KeyedHash.hash(TestBytes.utf8("abc"), key: key) != unkeyed)
        let expected = TestBytes.hex("fc6af40e9307435cf4d93a79116d626b3ee6648911835c52a6731395569eb571")
        #expect(KeyedHash.hash(TestBytes.utf8("logbook"), key: key) == expected)
    }

    // MARK: Base64

    @Test("Base64 decodes what it encodes, for every length up to 70")
    func base64RoundTrip() {
        for count in 0...70 {
            let bytes = TestBytes.pattern(count, seed: UInt8(count))
            let text = Base64.encode(bytes)
            #expect(text == bytes.withUnsafeBytes { Base64.encode($0) })
            #expect(text.utf8.count == (count * 4 + 2) / 3)
            #expect(Base64.decode(text) == bytes)
            #expect(Array(text.utf8).withUnsafeBufferPointer { Base64.decode($0) } == bytes)
            var target = [UInt8](repeating: 0xEE, count: Base64.decodedCapacity(text.utf8.count))
            let written = Array(text.utf8).withUnsafeBufferPointer { text in
                target.withUnsafeMutableBytes { Base64.decode(text, into: $0) }
            }
            #expect(written == count)
            #expect(Array(target.prefix(count)) == bytes)
            #expect(Self.publicEncoding(bytes) == text, "the table codec writes what libsodium writes")
            #expect(Self.publicDecoding(text) == bytes)
        }
    }

    /// `PublicBase64`'s encoding of `bytes`, as text.
    private static func publicEncoding(_ bytes: [UInt8]) -> String {
        var text = [UInt8](repeating: 0, count: PublicBase64.encodedByteCount(bytes.count))
        let written = text.withUnsafeMutableBufferPointer { text in
            bytes.withUnsafeBytes { PublicBase64.encode($0, into: text) }
        }
        return String(decoding: text.prefix(written), as: UTF8.self)
    }

    /// What `PublicBase64` decodes `text` to; nil when it refuses it.
    private static func publicDecoding(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard let count = PublicBase64.decodedByteCount(utf8.count) else { return nil }
        var bytes = [UInt8](repeating: 0, count: count)
        let written = utf8.withUnsafeBufferPointer { text in
            bytes.withUnsafeMutableBytes { PublicBase64.decode(text, into: $0) }
        }
        guard let written else { return nil }
        #expect(written == count)
        return bytes
    }

    @Test("The table codec agrees with libsodium's on every text of up to three characters")
    func publicBase64AgreesOnShortTexts() {
        let characters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/=. ".utf8)
        var texts = [""]
        for length in 1...3 {
            texts += texts.filter { $0.utf8.count == length - 1 }.flatMap { prefix in
                characters.map { prefix + String(UnicodeScalar($0)) }
            }
        }
        let disagreeing = texts.filter { Base64.decode($0) != Self.publicDecoding($0) }
        #expect(disagreeing.isEmpty, "\(disagreeing.prefix(5))")
    }

    @Test("Base64 uses the URL-safe alphabet without padding")
    func base64Alphabet() {
        #expect(Base64.encode([0xFB, 0xFF, 0xBF]) == "-_-_")
        #expect(Base64.encode([0]) == "AA")
        #expect(Base64.encode([0, 0]) == "AAA")
        #expect(Base64.encode([]) == "")
        let text = Base64.encode(Array(0...255))
        #expect(!text.contains("+") && !text.contains("/") && !text.contains("="))
    }

    @Test(
        "Base64 refuses what it would not write: padding, the other alphabet, whitespace, trailing text",
        arguments: ["AA==", "AAA=", "+/+/", "-_-/", "A", "AB", "AAB", " AA", "AA ", "AA\n", "A A", "AA\0", "AA.", "é"]
    )
    func base64Refusals(text: String) {
        #expect(Base64.decode(text) == nil)
        #expect(Array(text.utf8).withUnsafeBufferPointer { Base64.decode($0) } == nil)
        var target = [UInt8](repeating: 0xEE, count: Base64.decodedCapacity(text.utf8.count))
        let written = Array(text.utf8).withUnsafeBufferPointer { text in
            target.withUnsafeMutableBytes { Base64.decode(text, into: $0) }
        }
        #expect(written == nil)
        #expect(target.allSatisfy { $0 == 0 }, "what was decoded of a refused text is zeroed")
        #expect(Self.publicDecoding(text) == nil)
    }

    // MARK: Hex

    @Test("Hex writes two lower-case digits per byte")
    func hex() {
        #expect(Hex.encode([0x00, 0x0F, 0xAB, 0xFF]) == "000fabff")
        #expect(Hex.encode([]) == "")
        #expect(Hex.encode(TestBytes.knownKey).utf8.count == 64)
    }
}
