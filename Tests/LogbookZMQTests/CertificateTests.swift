import Foundation
import Glibc
import LogbookZMQ
import Testing

/// CZMQ's certificate format as Logbook reads and writes it: round trips, and a clear typed
/// error for each way a key file can be broken.
@Suite("CURVE certificates")
struct CertificateTests {
    static let pair = try! CurveKeyPair.generate()
    static let secretText = CertificateWriter.secretText(
        Certificate(pair, metadata: [Certificate.Property("role", "writer")]))

    @Test func writtenCertificatesReadBackWithTheirKeysAndMetadata() throws {
        let secret = try CertificateParser.parse(Self.secretText)
        #expect(secret.publicKey == Self.pair.publicKey)
        #expect(secret.secretKey == Self.pair.secretKey)
        #expect(secret.metadata("role") == "writer")
        let publicOnly = try CertificateParser.parse(CertificateWriter.publicText(secret))
        #expect(publicOnly == secret.publicOnly)
        #expect(publicOnly.secretKey == nil)
    }

    @Test func zplVariantsThatZcertAndPyzmqWriteAreAccepted() throws {
        let text = """
            #   ****  Generated on 2026-01-01 by pyzmq  ****

            metadata
                role = reader    # a bare word, then a comment
                name = 'single quoted'
            curve
                public-key = "\(Self.pair.publicKey.z85)"

            """
        let certificate = try CertificateParser.parse(text)
        #expect(certificate.metadata("role") == "reader")
        #expect(certificate.metadata("name") == "single quoted")
    }

    @Test func keysAreDerivedAndEncodedByLibzmq() throws {
        let derived = try CurveKeyPair(secretKey: Self.pair.secretKey)
        #expect(derived.publicKey == Self.pair.publicKey)
        #expect(try CurveKey(z85: Self.pair.publicKey.z85) == Self.pair.publicKey)
        // RFC 32's test vector.
        #expect(Z85.encode([0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B]) == "HelloWorld")
        #expect(try Z85.decode("HelloWorld") == [0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B])
    }

    @Test func aFileCutShortIsTruncated() {
        let cut = String(Self.secretText.dropLast(20))
        #expect(
            throws: CertificateError.truncated(line: cut.split(separator: "\n", omittingEmptySubsequences: false).count)
        ) {
            try CertificateParser.parse(cut)
        }
        #expect(throws: CertificateError.empty) { try CertificateParser.parse("") }
    }

    @Test func aFileCutAtALineEndMissesWhatFollows() {
        let lines = Self.secretText.split(separator: "\n", omittingEmptySubsequences: false)
        let beforeCurve = lines.prefix { $0 != "curve" }.joined(separator: "\n") + "\n"
        #expect(throws: CertificateError.missingSection("curve")) { try CertificateParser.parse(beforeCurve) }
        let noMetadata = Self.secretText.replacingOccurrences(of: "metadata\n    role = \"writer\"\n", with: "")
        #expect(throws: CertificateError.missingSection("metadata")) { try CertificateParser.parse(noMetadata) }
        let noPublic = lines.filter { !$0.contains("public-key") }.joined(separator: "\n")
        #expect(throws: CertificateError.missingKey("public-key")) { try CertificateParser.parse(noPublic) }
    }

    @Test func aTamperedKeyIsBadZ85OrTheWrongLengthOrNotThePairsSecret() throws {
        let key = Self.pair.publicKey.z85
        let line =
            try #require(
                Self.secretText.split(separator: "\n", omittingEmptySubsequences: false).firstIndex {
                    $0.contains("public-key")
                }) + 1
        let badCharacter = Self.secretText.replacingOccurrences(of: key, with: "~" + key.dropFirst())
        #expect(throws: CertificateError.badZ85(key: "public-key", line: line, .character(offset: 0))) {
            try CertificateParser.parse(badCharacter)
        }
        let short = Self.secretText.replacingOccurrences(of: key, with: String(key.dropLast(5)))
        #expect(throws: CertificateError.wrongLength(key: "public-key", line: line, length: 35)) {
            try CertificateParser.parse(short)
        }
        let other = try CurveKeyPair.generate().publicKey.z85
        let swapped = Self.secretText.replacingOccurrences(of: key, with: other)
        #expect(throws: CertificateError.mismatchedKeys) { try CertificateParser.parse(swapped) }
    }

    @Test func shapesZplDoesNotAllowAreMalformed() {
        let cases = [
            "metadata\n\tname = \"x\"\ncurve\n", "metadata\n  name = \"x\"\ncurve\n", "name = \"x\"\n",
            "metadata\n    name \"x\"\ncurve\n", "metadata\n    name = \"x\ncurve\n", "other\n",
            "metadata\nmetadata\n", "metadata\ncurve\n    password = \"x\"\n",
        ]
        for text in cases {
            #expect(throws: CertificateError.self, "\(text.debugDescription)") { try CertificateParser.parse(text) }
            do {
                _ = try CertificateParser.parse(text)
            } catch {
                guard case .malformed = error else {
                    Issue.record("\(text.debugDescription): \(error), expected malformed")
                    continue
                }
            }
        }
    }

    @Test func keyFilesAreWrittenOnceWithASecretOnlyTheOwnerReads() throws {
        let folder = try TemporaryFolder()
        let certificate = Certificate(Self.pair, metadata: [Certificate.Property("role", "admin")])
        let paths = try KeyFiles.writePair(certificate, name: "ann", in: folder.path)
        #expect(paths.publicPath == folder.path + "/ann")
        #expect(paths.secretPath == folder.path + "/ann_secret")
        #expect(mode(paths.secretPath) == 0o600)
        #expect(mode(paths.publicPath) == 0o644)
        #expect(try KeyFiles.secretCertificate(at: paths.secretPath) == certificate)
        #expect(try KeyFiles.certificate(at: paths.publicPath) == certificate.publicOnly)
        #expect(throws: KeyFileError.self) { try KeyFiles.writePair(certificate, name: "ann", in: folder.path) }
        #expect(try KeyFiles.secretCertificate(at: paths.secretPath) == certificate, "never overwritten")

        chmod(paths.publicPath, 0o600)
        #expect(throws: KeyFileError(paths.publicPath, .notSecret)) {
            try KeyFiles.secretCertificate(at: paths.publicPath)
        }
        chmod(paths.secretPath, 0o644)
        #expect(throws: KeyFileError(paths.secretPath, .exposed(mode: 0o100644))) {
            try KeyFiles.secretCertificate(at: paths.secretPath)
        }
        #expect(throws: KeyFileError.self) { try KeyFiles.certificate(at: folder.path + "/missing") }
    }

    private func mode(_ path: String) -> mode_t {
        var info = stat()
        stat(path, &info)
        return info.st_mode & 0o777
    }
}

/// A folder under the temporary directory, removed when the value goes.
final class TemporaryFolder {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("logbook-keys-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }
}
