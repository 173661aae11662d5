import Foundation
import Glibc
import LogbookClient
import LogbookJSON
import LogbookZMQ
import Testing

/// The command line around CURVE: `keygen`, a server that refuses to start on any key file
/// or allow-list it cannot trust (one line, exit 3, nothing bound), and `up --secure`.
@Suite("End to end: keys on the command line", .serialized)
struct SecurityCLITests {
    @Test("keygen writes a certificate pair once, the secret file 0600, and never replaces a file")
    func keygen() async throws {
        let folder = try ServiceCluster().directory.appendingPathComponent("keys").path
        let made = try await runLogbook(["keygen", "ann", "--role", "writer", "--dir", folder])
        #expect(made.status == 0, "\(made.stderr)")
        let report = try made.json()
        #expect(report["role"] == "writer")
        let secret = try KeyFiles.secretCertificate(at: folder + "/ann_secret")
        #expect(report["publicKey"] == .string(secret.publicKey.z85))
        #expect(try KeyFiles.certificate(at: folder + "/ann").metadata("role") == "writer")
        let again = try await runLogbook(["keygen", "ann", "--dir", folder])
        #expect(again.status == 3)
        #expect(again.stderr.contains("never overwritten"), "\(again.stderr)")
        #expect(try KeyFiles.secretCertificate(at: folder + "/ann_secret") == secret)
        #expect(try await runLogbook(["keygen", "bob", "--role", "root", "--dir", folder]).status == 2)
    }

    @Test(
        "a server refuses to start, in one line with exit 3 and binding nothing, on a key file or allow-list it cannot use"
    )
    func refusedStarts() async throws {
        let cluster = try ServiceCluster()
        let keys = try TestKeys(in: cluster.directory)
        try keys.make("ann", .writer)
        let secret = keys.folder + "/server_secret"
        let text = try String(contentsOfFile: secret, encoding: .utf8)
        let serverKey = keys.server.secretKey.z85
        func variant(_ name: String, _ body: String, mode: mode_t = 0o600) throws -> String {
            let path = keys.folder + "/" + name
            try body.write(toFile: path, atomically: false, encoding: .utf8)
            chmod(path, mode)
            return path
        }
        let emptyClients = cluster.directory.appendingPathComponent("empty").path
        try FileManager.default.createDirectory(atPath: emptyClients, withIntermediateDirectories: true)
        let roleless = cluster.directory.appendingPathComponent("roleless").path
        try FileManager.default.createDirectory(atPath: roleless, withIntermediateDirectories: true)
        try KeyFiles.writePublic(Certificate(try CurveKeyPair.generate()), to: roleless + "/nobody")

        let cases: [(String, [String], String)] = [
            (
                "tampered",
                [
                    "--curve-secret",
                    try variant(
                        "tampered", text.replacingOccurrences(of: serverKey, with: "~" + serverKey.dropFirst())),
                    "--clients", keys.clients,
                ],
                "not Z85"
            ),
            (
                "truncated",
                ["--curve-secret", try variant("truncated", String(text.dropLast(12))), "--clients", keys.clients],
                "truncated"
            ),
            (
                "world-readable",
                ["--curve-secret", try variant("exposed", text, mode: 0o644), "--clients", keys.clients], "chmod 600"
            ),
            (
                "public", ["--curve-secret", keys.folder + "/ann", "--clients", keys.clients],
                "readable or writable by other users"
            ),
            ("missing", ["--curve-secret", keys.folder + "/nothing", "--clients", keys.clients], "cannot read it"),
            ("empty allow-list", ["--curve-secret", secret, "--clients", emptyClients], "holds no client certificate"),
            ("no role", ["--curve-secret", secret, "--clients", roleless], "no role"),
        ]
        for (name, flags, phrase) in cases {
            // A worker that starts anyway would serve until stopped: it is waited for, then killed.
            let worker = try cluster.background(["run", "worker", "--data-dir", cluster.workerDataDirectory] + flags)
            let status = await worker.waitForExit(within: patience)
            #expect(status == 3, "\(name): \(status.map(String.init) ?? "still running") \(worker.stderr)")
            #expect(worker.stderr.split(separator: "\n").count == 1, "\(name): \(worker.stderr)")
            #expect(worker.stderr.contains(phrase), "\(name): \(worker.stderr)")
            for endpoint in [cluster.commands, cluster.feed, cluster.log] {
                #expect(!isListening(endpoint), "\(name): \(endpoint) was bound")
            }
        }
        let half = try await cluster.run(["run", "worker", "--clients", keys.clients])
        #expect(half.status == 2, "\(half.stderr)")
        let clientHalf = try await cluster.run(["send", "AddProduct", "{}", "--curve-key", keys.folder + "/ann_secret"])
        #expect(clientHalf.status == 2, "\(clientHalf.stderr)")
        chmod(keys.folder + "/ann_secret", 0o644)
        let exposedClient = try await cluster.run(
            ["send", "AddProduct", "{}", "--attempts", "1"] + keys.clientFlags("ann"))
        #expect(exposedClient.status == 3 && exposedClient.stderr.contains("chmod 600"), "\(exposedClient.stderr)")
    }

    @Test("up --secure makes a development key set, runs both processes with CURVE and prints how to use it")
    func upSecure() async throws {
        let cluster = try ServiceCluster()
        let dataDirectory = cluster.directory.appendingPathComponent("up").path
        let up = try cluster.background(["up", "--secure", "--data-dir", dataDirectory])
        #expect(await up.waitForLines(2, within: patience), "\(up.lines) \(up.stderr)")
        let hint = up.lines.joined(separator: "\n")
        #expect(hint.contains("LOGBOOK_CURVE_KEY=\(dataDirectory)/keys/cli_secret"), "\(hint)")
        cluster.clientKeys = try CurveClientKeys(
            clientSecretCertificate: dataDirectory + "/keys/cli_secret",
            serverCertificate: dataDirectory + "/keys/server")
        let client = try cluster.client(timeout: .milliseconds(500), attempts: 1)
        defer { client.close() }
        let answering = await bothAnswer(cluster)
        try #require(answering, "\(up.stderr)")
        let patient = try cluster.patientClient()
        defer { patient.close() }
        let sent = try await patient.send(type: "AddProduct", data: Fixture.product("tea"))
        _ = try await patient.query(
            type: "GetProduct", data: ["productId": "tea"], minPosition: sent.position,
            timeoutMs: patientQueryMilliseconds)
        let plain = try await cluster.run(["status", "--timeout-ms", "300", "--attempts", "1"])
        #expect(
            plain.status == 1 && plain.stdout.contains("unreachable"), "a plain client was answered: \(plain.stdout)")
        let secured = try await runLogbook(
            ["status"] + cluster.settings,
            environment: [
                "LOGBOOK_CURVE_KEY": dataDirectory + "/keys/cli_secret",
                "LOGBOOK_SERVER_KEY": dataDirectory + "/keys/server",
            ])
        #expect(secured.status == 0, "\(secured.stdout) \(secured.stderr)")
        // The groups process follows the worker with the reader key and serves the admin key.
        let created = try await runLogbook(
            ["groups", "create", "mail", "--topics", "products", "--from", "head"] + cluster.settings,
            environment: [
                "LOGBOOK_CURVE_KEY": dataDirectory + "/keys/cli_secret",
                "LOGBOOK_SERVER_KEY": dataDirectory + "/keys/server",
            ])
        #expect(created.status == 0, "\(created.stdout) \(created.stderr)")
        #expect(try created.json()["result"]?.objectValue?["checkpoint"]?.intValue == Int(sent.position))
        #expect(await up.signal(SIGTERM) == 0, "\(up.stderr)")
    }
}
