import Foundation
import LogbookZMQ
import Testing

/// Certificate files made by pyzmq's `zmq.auth` load in Logbook unchanged, and Logbook's
/// load in pyzmq's `zmq.auth.load_certificate`: both run for real (python3 with pyzmq, as the
/// wire-contract check needs it too).
@Suite("CURVE certificates with pyzmq", .serialized)
struct PyzmqInteropTests {
    @Test func pyzmqCertificatesLoadUnchanged() throws {
        let folder = try TemporaryFolder()
        // pyzmq writes with the umask: 077 keeps its secret file to its owner, as Logbook asks.
        let printed = try python(
            """
            import os, sys, zmq.auth
            os.umask(0o077)
            public, secret = zmq.auth.create_certificates(sys.argv[1], "py", metadata={"role": "reader"})
            p, s = zmq.auth.load_certificate(secret)
            print(p.decode()); print(s.decode())
            """, folder.path)
        let keys = printed.split(separator: "\n").map(String.init)
        try #require(keys.count == 2, "python printed \(printed)")
        let secret = try KeyFiles.secretCertificate(at: folder.file("py.key_secret"))
        #expect(secret.publicKey.z85 == keys[0])
        #expect(secret.secretKey?.z85 == keys[1])
        #expect(secret.metadata("role") == "reader")
        #expect(try KeyFiles.certificate(at: folder.file("py.key")).publicKey.z85 == keys[0])

        // pyzmq's public file has no metadata: in a role folder of an allow-list it goes in as it is.
        let clients = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: clients.file("reader"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: folder.file("py.key"), toPath: clients.file("reader/py.key"))
        #expect(try AllowList.load(directory: clients.path).role(of: keys[0]) == .reader)
    }

    @Test func logbookCertificatesLoadInPyzmq() throws {
        let folder = try TemporaryFolder()
        let pair = try CurveKeyPair.generate()
        let paths = try KeyFiles.writePair(
            Certificate(pair, metadata: [Certificate.Property("role", "writer")]), name: "swift", in: folder.path)
        let printed = try python(
            """
            import sys, zmq.auth
            p, s = zmq.auth.load_certificate(sys.argv[1])
            q, none = zmq.auth.load_certificate(sys.argv[2])
            assert none is None and p == q
            print(p.decode()); print(s.decode())
            """, paths.secretPath, paths.publicPath)
        #expect(printed.split(separator: "\n").map(String.init) == [pair.publicKey.z85, pair.secretKey.z85])
    }

    /// Runs `script` with python3 and returns its standard output; fails on a non-zero exit.
    private func python(_ script: String, _ arguments: String...) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script] + arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let complaint = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "python3 (with pyzmq) failed: \(complaint)")
        return printed.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
