import Foundation
import LogbookZMQ
import Testing

/// The allow-list folder: roles from metadata or from role folders, and a clear error for
/// every folder a server must not start with.
@Suite("CURVE allow-list")
struct AllowListTests {
    @Test func rolesComeFromMetadataOrFromTheRoleFolder() throws {
        let folder = try TemporaryFolder()
        let writer = try listed("ann", role: "writer", in: folder.path)
        try FileManager.default.createDirectory(atPath: folder.file("reader"), withIntermediateDirectories: true)
        let reader = try listed("bob", role: nil, in: folder.file("reader"))
        try FileManager.default.createDirectory(atPath: folder.file("admin"), withIntermediateDirectories: true)
        let admin = try listed("cyd", role: "admin", in: folder.file("admin"))
        _ = FileManager.default.createFile(atPath: folder.file(".swap"), contents: Data("junk".utf8))
        let list = try AllowList.load(directory: folder.path)
        #expect(list.entries.count == 3)
        #expect(list.role(of: writer.z85) == .writer)
        #expect(list.role(of: reader.z85) == .reader)
        #expect(list.role(of: admin.z85) == .admin)
        #expect(list.role(of: try CurveKeyPair.generate().publicKey.z85) == nil)
    }

    @Test func foldersAServerMustNotStartWithAreRefused() throws {
        let empty = try TemporaryFolder()
        #expect(throws: AllowListError.empty(empty.path)) { try AllowList.load(directory: empty.path) }
        #expect(throws: AllowListError.self) { try AllowList.load(directory: empty.file("missing")) }

        let noRole = try TemporaryFolder()
        _ = try listed("ann", role: nil, in: noRole.path)
        #expect(throws: AllowListError.missingRole(noRole.file("ann"))) { try AllowList.load(directory: noRole.path) }

        let badRole = try TemporaryFolder()
        _ = try listed("ann", role: "root", in: badRole.path)
        #expect(throws: AllowListError.unknownRole(badRole.file("ann"), "root")) {
            try AllowList.load(directory: badRole.path)
        }

        let secret = try TemporaryFolder()
        let pair = try CurveKeyPair.generate()
        try KeyFiles.writePair(
            Certificate(pair, metadata: [Certificate.Property("role", "writer")]), name: "ann", in: secret.path)
        #expect(throws: AllowListError.secretCertificate(secret.file("ann_secret"))) {
            try AllowList.load(directory: secret.path)
        }

        let mismatch = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: mismatch.file("reader"), withIntermediateDirectories: true)
        _ = try listed("ann", role: "writer", in: mismatch.file("reader"))
        #expect(throws: AllowListError.roleMismatch(mismatch.file("reader/ann"), named: .writer, folder: .reader)) {
            try AllowList.load(directory: mismatch.path)
        }

        let tampered = try TemporaryFolder()
        let path = tampered.file("ann")
        _ = try listed("ann", role: "writer", in: tampered.path)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        try String(text.dropLast(10)).write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: AllowListError.self) { try AllowList.load(directory: tampered.path) }
    }

    @Test func rolesAllowWhatArchitectureSays() {
        #expect(ClientRole.writer.may(.command) && ClientRole.writer.may(.hint))
        #expect(!ClientRole.reader.may(.hint))
        #expect(!ClientRole.writer.may(.query) && !ClientRole.writer.may(.subscribe))
        #expect(!ClientRole.writer.may(.readLog) && !ClientRole.writer.may(.rebuild) && !ClientRole.writer.may(.status))
        #expect(ClientRole.reader.may(.query) && ClientRole.reader.may(.subscribe) && ClientRole.reader.may(.readLog))
        #expect(!ClientRole.reader.may(.command) && !ClientRole.reader.may(.rebuild) && !ClientRole.reader.may(.status))
        #expect(BusAction.allCases.allSatisfy { ClientRole.admin.may($0) })
    }

    /// Writes a public certificate `name` (with `role` in its metadata, if given); returns its key.
    private func listed(_ name: String, role: String?, in folder: String) throws -> CurveKey {
        let pair = try CurveKeyPair.generate()
        let metadata = role.map { [Certificate.Property("role", $0)] } ?? []
        try KeyFiles.writePublic(
            Certificate(pair, metadata: metadata), to: (folder as NSString).appendingPathComponent(name))
        return pair.publicKey
    }
}
