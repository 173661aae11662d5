import Foundation
import Glibc
import Testing

@testable import LogbookCrypto

/// `MasterKey`: its subkeys, its key file, the check value, and wrapping data keys.
@Suite("MasterKey: subkeys, the key file, the check value, data key wrapping")
struct MasterKeyTests {
    // MARK: Subkeys

    @Test("The subkeys differ from each other and from the master key")
    func subkeysDiffer() {
        let master = MasterKey.generate()
        let keys = [master.key, master.wrappingKey, master.emailHashKey, master.checkKey]
        for (index, key) in keys.enumerated() {
            for other in keys[(index + 1)...] { #expect(key != other) }
        }
    }

    /// The answers come from Python's `hashlib.blake2b` with libsodium's derivation: no
    /// message, the master key as key, the subkey id (little-endian) as salt, "logbookk" as
    /// personalisation. They pin the derivation: changing it would orphan every wrapped key.
    @Test("The subkeys are crypto_kdf's, context logbookk, ids 1, 2 and 3")
    func subkeysKnownAnswer() throws {
        let master = MasterKey(try SecretKey(bytes: TestBytes.knownKey))
        #expect(master.key.bytes == TestBytes.knownKey)
        let wrapping = "c8f560d761c8a921d3a4f762ce7b2e7ab16d4d3da0b18ddd3096b55bb374d868"
        let emailHash = "33d9a378fb60120f12b64af0fcfd8fac6d796f7aa0088a7e6548f3393163b343"
        let check = "461ea5153f39aa62f61d8bda8c9b21ff39873ae37b6765eb6e05e3ed496a316b"
        #expect(Hex.encode(master.wrappingKey.bytes) == wrapping)
        #expect(Hex.encode(master.emailHashKey.bytes) == emailHash)
        #expect(Hex.encode(master.checkKey.bytes) == check)
    }

    // MARK: The key file's text

    @Test("A key file is one line: the format, a space, the key in base64, a newline")
    func fileTextFormat() throws {
        let master = MasterKey(try SecretKey(bytes: TestBytes.knownKey))
        #expect(master.fileText == "logbook-master-key-v1 \(Base64.encode(TestBytes.knownKey))\n")
        let generated = MasterKey.generate()
        #expect(generated.fileText.utf8.count == 66)
        #expect(try MasterKey.parse(fileText: generated.fileText).key == generated.key)
        let withoutNewline = String(generated.fileText.dropLast())
        #expect(try MasterKey.parse(fileText: withoutNewline).key == generated.key)
    }

    /// A valid key's base64, to build malformed files around.
    private static let validKey = Base64.encode(TestBytes.pattern(32))

    @Test(
        "Malformed key files are refused with a reason that quotes none of the file",
        arguments: [
            ("", "the file is empty"),
            ("\n", "the file is empty"),
            ("\(validKey)\n", "it does not start with \"logbook-master-key-v1 \""),
            ("logbook-master-key \(validKey)\n", "it does not start with \"logbook-master-key-v1 \""),
            (
                "logbook-master-key-v2 \(validKey)\n",
                "its format is logbook-master-key-v2; this build reads logbook-master-key-v1"
            ),
            ("logbook-master-key-v1\n", "the key is missing after \"logbook-master-key-v1 \""),
            ("logbook-master-key-v1 \n", "the key is missing after \"logbook-master-key-v1 \""),
            ("logbook-master-key-v1 \(validKey)\n\n", "it has more than one line"),
            ("logbook-master-key-v1 \(validKey)\nmore\n", "it has more than one line"),
            ("logbook-master-key-v1 \(validKey)\r\n", "the key has spaces, tabs or a carriage return around it"),
            ("logbook-master-key-v1  \(validKey)\n", "the key has spaces, tabs or a carriage return around it"),
            ("logbook-master-key-v1 \(validKey)=\n", "the key is not URL-safe base64 without padding"),
            ("logbook-master-key-v1 \(Base64.encode(TestBytes.pattern(16)))\n", "the key is 16 bytes, not 32"),
            ("logbook-master-key-v1 \(Base64.encode(TestBytes.pattern(33)))\n", "the key is 33 bytes, not 32"),
        ])
    func malformedText(text: String, reason: String) {
        #expect(throws: CryptoError.malformedKeyFile(reason)) { try MasterKey.parse(fileText: text) }
        #expect(!reason.contains(Self.validKey))
    }

    // MARK: The key file on disk

    /// A folder of its own under the temporary directory, removed by `remove()`.
    private struct Folder {
        let path: String
        init() throws {
            path = FileManager.default.temporaryDirectory.path + "/logbook-crypto-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        }
        func file(_ name: String) -> String { path + "/" + name }
        func remove() { try? FileManager.default.removeItem(atPath: path) }
    }

    private static func mode(_ path: String) -> mode_t? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return status.st_mode & 0o777
    }

    @Test("A written key file reads back as the same key and has mode 0600")
    func fileRoundTrip() throws {
        let folder = try Folder()
        defer { folder.remove() }
        let master = MasterKey.generate()
        let path = folder.file("master.key")
        try master.write(to: path)
        #expect(Self.mode(path) == 0o600)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == master.fileText)
        let read = try MasterKey.read(path: path)
        #expect(read.key == master.key)
        #expect(read.wrappingKey == master.wrappingKey)
    }

    @Test("Writing over an existing file is refused, and the file keeps its key")
    func noOverwrite() throws {
        let folder = try Folder()
        defer { folder.remove() }
        let path = folder.file("master.key")
        let first = MasterKey.generate()
        try first.write(to: path)
        #expect(throws: CryptoError.unwritableKeyFile(path: path, reason: "File exists")) {
            try MasterKey.generate().write(to: path)
        }
        #expect(try MasterKey.read(path: path).key == first.key)
    }

    @Test("Writing into a missing folder fails and names the path")
    func unwritable() throws {
        let folder = try Folder()
        defer { folder.remove() }
        let path = folder.file("missing/master.key")
        #expect(throws: CryptoError.unwritableKeyFile(path: path, reason: "No such file or directory")) {
            try MasterKey.generate().write(to: path)
        }
    }

    @Test("Reading a missing file, or a folder, gives unreadableKeyFile with the system's reason")
    func unreadable() throws {
        let folder = try Folder()
        defer { folder.remove() }
        let missing = folder.file("missing.key")
        #expect(throws: CryptoError.unreadableKeyFile(path: missing, reason: "No such file or directory")) {
            try MasterKey.read(path: missing)
        }
        #expect(throws: CryptoError.unreadableKeyFile(path: folder.path, reason: "Is a directory")) {
            try MasterKey.read(path: folder.path)
        }
    }

    @Test("Reading a malformed file gives malformedKeyFile with the path and the reason")
    func malformedFile() throws {
        let folder = try Folder()
        defer { folder.remove() }
        let path = folder.file("master.key")
        try "logbook-master-key-v1 \(Base64.encode(TestBytes.pattern(31)))\n".write(
            toFile: path, atomically: false, encoding: .utf8)
        #expect(throws: CryptoError.malformedKeyFile("\(path): the key is 31 bytes, not 32")) {
            try MasterKey.read(path: path)
        }
        let large = folder.file("large.key")
        try String(repeating: "x", count: 5000).write(toFile: large, atomically: false, encoding: .utf8)
        #expect(throws: CryptoError.malformedKeyFile("\(large): it is larger than a key file (4096 bytes at most)")) {
            try MasterKey.read(path: large)
        }
    }

    @Test("Every error's description is one line")
    func descriptions() {
        let errors: [CryptoError] = [
            .cannotOpen, .wrongKeyLength(31), .malformedKeyFile("the file is empty"),
            .unreadableKeyFile(path: "/k", reason: "No such file or directory"),
            .unwritableKeyFile(path: "/k", reason: "File exists"), .unavailable("sodium_init failed"),
        ]
        for error in errors {
            #expect(!error.description.isEmpty)
            #expect(!error.description.contains("\n"))
        }
        #expect(CryptoError.wrongKeyLength(31).description == "a secret key is 32 bytes, not 31")
    }

    // MARK: The check value

    @Test("A check value verifies with its own master key only")
    func check() throws {
        let master = MasterKey.generate()
        let check = master.makeCheck()
        #expect(master.verify(check: check))
        #expect(try MasterKey.parse(fileText: master.fileText).verify(check: check))
        #expect(!MasterKey.generate().verify(check: check))
        #expect(master.makeCheck() != check)
        #expect(!master.verify(check: []))
        #expect(!master.verify(check: Array(check.dropLast())))
        #expect(!master.verify(check: master.wrap(SecretKey.random(), userId: "u")))
    }

    // MARK: Data keys

    @Test("A wrapped data key unwraps for its user under its master key")
    func wrapRoundTrip() throws {
        let master = MasterKey.generate()
        let dataKey = SecretKey.random()
        let wrapped = master.wrap(dataKey, userId: "user-1")
        #expect(wrapped.count == Sealing.overhead + SecretKey.byteCount)
        #expect(try master.unwrap(wrapped, userId: "user-1") == dataKey)
        #expect(master.wrap(dataKey, userId: "user-1") != wrapped)
    }

    @Test("A wrapped data key does not unwrap for another user, under another master key, or changed")
    func wrapRefusals() {
        let master = MasterKey.generate()
        let wrapped = master.wrap(SecretKey.random(), userId: "user-1")
        #expect(throws: CryptoError.cannotOpen) { try master.unwrap(wrapped, userId: "user-2") }
        #expect(throws: CryptoError.cannotOpen) { try master.unwrap(wrapped, userId: "") }
        #expect(throws: CryptoError.cannotOpen) { try MasterKey.generate().unwrap(wrapped, userId: "user-1") }
        #expect(throws: CryptoError.cannotOpen) { try master.unwrap(Array(wrapped.dropLast()), userId: "user-1") }
        var flipped = wrapped
        flipped[30] ^= 0x01
        #expect(throws: CryptoError.cannotOpen) { try master.unwrap(flipped, userId: "user-1") }
        let sealed = Sealing.seal(TestBytes.pattern(32), key: master.emailHashKey, associatedData: [])
        #expect(throws: CryptoError.cannotOpen) { try master.unwrap(sealed, userId: "user-1") }
    }
}
