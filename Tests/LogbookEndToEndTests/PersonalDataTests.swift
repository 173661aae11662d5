import Foundation
import Glibc
import LogbookApplication
import LogbookClient
import LogbookCrypto
import LogbookJSON
import Testing

/// Personal data on real processes: sealed in every file the worker writes, served in clear,
/// forgotten for good on `ForgetUser`, across a `kill -9`; a wrong or missing master key
/// stops the worker before it serves.
@Suite("End to end: personal data sealed, and forgotten on request")
struct PersonalDataTests {
    /// One user the test registers, with values found nowhere else.
    struct Canary {
        let id: String
        let name: String
        let renamed: String
        let email: String
    }

    static func canaries(_ count: Int) -> [Canary] {
        let token = String(UInt32.random(in: 0x1000_0000...0xFFFF_FFFF), radix: 16)
        return (0..<count).map { index in
            // Fixed width, so that no canary is part of another's text.
            let number = String(String(index + 1000).dropFirst())
            return Canary(
                id: "pd-\(index)", name: "Canary\(token)N\(number)", renamed: "Canary\(token)R\(number)",
                email: "canary\(token)m\(number)@example.com")
        }
    }

    /// Every byte of the regular files directly in `directory`.
    static func bytes(in directory: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            let path = (directory as NSString).appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue
            else { continue }
            files[name] = try Data(contentsOf: URL(fileURLWithPath: path))
        }
        return files
    }

    @Test(
        "200 canary users, 100 forgotten: forgotten everywhere after a kill -9, a backup, restarts and a rebuild; no file holds them"
    )
    func forgettingOnRealProcesses() async throws {
        let cluster = try ServiceCluster()
        let ports = try FreePorts.take(2)
        let metrics = ["127.0.0.1:\(ports[0])", "127.0.0.1:\(ports[1])"]
        cluster.workerFlags = ["--metrics", metrics[0]]
        cluster.queryFlags = ["--metrics", metrics[1]]
        try await cluster.startWorker()
        try await cluster.startQuery()
        let client = try cluster.client()
        defer { client.close() }
        let canaries = Self.canaries(200)
        for (index, canary) in canaries.enumerated() {
            _ = try await client.send(
                type: "RegisterUser",
                data: [
                    "userId": .string(canary.id), "name": .string(canary.name), "email": .string(canary.email),
                    "gender": "female", "birthday": "1990-02-28",
                ])
            _ = try await client.send(type: "CreatePost", data: Fixture.post("post-\(canary.id)", author: canary.id))
            if index % 3 == 0 {
                _ = try await client.send(
                    type: "UpdateUserProfile", data: ["userId": .string(canary.id), "name": .string(canary.renamed)])
            }
        }
        let forgotten = canaries.enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
        let kept = canaries.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
        var last: CommandReceipt?
        for canary in forgotten {
            last = try await client.send(
                type: "ForgetUser", data: ["userId": .string(canary.id)], commandId: "forget-\(canary.id)")
        }
        let reply = try #require(last)
        #expect(reply.events.map(\.type) == ["UserForgotten", "EmailReleased"])
        // No metric, label or value, of either process carries a personal value.
        try await cluster.queryStatus(after: reply.position)
        var scraped = ""
        for address in metrics { scraped += try await Scrape.of(address).text }
        #expect(scraped.contains("logbook_"), "the scrape read the processes' metrics")
        let leaked = canaries.flatMap { [$0.name, $0.renamed, $0.email, $0.email.lowercased()] }
            .filter { scraped.contains($0) }
        #expect(leaked.isEmpty, "\(leaked.prefix(5))")
        // The restarts below serve no metrics (their ports are not taken again).
        cluster.workerFlags = []
        cluster.queryFlags = []
        // Killed right after the last reply: the forgetting holds once it starts again.
        cluster.signalWorker(SIGKILL)
        _ = cluster.stopWorker(SIGKILL)
        try await cluster.startWorker()

        let retried = try await client.send(
            type: "ForgetUser", data: ["userId": .string(forgotten[0].id)], commandId: "forget-\(forgotten[0].id)")
        #expect(retried.events.map(\.type) == ["UserForgotten", "EmailReleased"], "a retry answers the first outcome")
        #expect(
            await refusal {
                _ = try await client.send(type: "ForgetUser", data: ["userId": .string(forgotten[0].id)])
            }?.code
                == "not_found", "a forgotten user is not forgotten again")

        let log = try await cluster.wholeLog()
        #expect(!log.contains { $0.stream.contains("@") || $0.stream.lowercased().contains("canary") })
        for canary in forgotten {
            let personal = log.filter {
                ["UserRegistered", "UserProfileUpdated", "EmailClaimed", "EmailReleased"].contains($0.type)
                    && (try? JSONParser.parse($0.data).objectValue?["userId"]) == .string(canary.id)
            }
            #expect(personal.count >= 3)
            for event in personal {
                let data = try #require(try JSONParser.parse(event.data).objectValue)
                #expect(data["forgotten"] == .bool(true), "\(event.type) of \(canary.id)")
                #expect(data["name"] ?? .null == .null && data["email"] ?? .null == .null)
            }
        }
        for canary in kept {
            let registered = try #require(log.first { $0.type == "UserRegistered" && $0.stream == "user-\(canary.id)" })
            let data = try #require(try JSONParser.parse(registered.data).objectValue)
            #expect(data["name"] == .string(canary.name) && data["email"] == .string(canary.email))
            #expect(data["forgotten"] == nil)
        }

        // The query process drops forgotten users and keeps their posts.
        let head = try await cluster.head()
        try await cluster.queryStatus(after: head)
        for canary in forgotten {
            #expect(
                await refusal { _ = try await client.query(type: "GetUser", data: ["userId": .string(canary.id)]) }?
                    .code
                    == "not_found", "\(canary.id) is still in the read models")
            let post = try await client.query(type: "GetPost", data: ["postId": .string("post-\(canary.id)")])
            #expect(post.result.objectValue?["authorId"] == .string(canary.id))
        }
        for (index, canary) in kept.enumerated() {
            let user = try await client.query(type: "GetUser", data: ["userId": .string(canary.id)])
            let renamed = (2 * index) % 3 == 0
            #expect(user.result.objectValue?["name"] == .string(renamed ? canary.renamed : canary.name))
            #expect(user.result.objectValue?["email"] == .string(canary.email))
        }

        // A backup, every process restarted, and a full rebuild of the read models.
        let backup = cluster.directory.appendingPathComponent("backup").path
        let backedUp = try await runLogbook(["backup", backup, "--data-dir", cluster.workerDataDirectory])
        #expect(backedUp.status == 0, "\(backedUp.stderr)")
        #expect(cluster.stopWorker() == 0)
        #expect(cluster.stopQuery() == 0)
        try await cluster.startWorker()
        try await cluster.startQuery()
        let rebuilt = try await cluster.run(["rebuild"])
        #expect(rebuilt.status == 0, "\(rebuilt.stdout) \(rebuilt.stderr)")
        try await cluster.queryStatus(after: try await cluster.head())
        #expect(
            await refusal {
                _ = try await client.query(type: "GetUser", data: ["userId": .string(forgotten[2].id)])
            }?.code
                == "not_found", "a rebuild leaves forgotten users out")
        let listed = try await client.query(type: "ListUsers", data: ["perPage": 100])
        #expect(listed.result.objectValue?["total"] == .int(kept.count))
        let replayed = try await cluster.run(["replay", "--topics", "users"])
        #expect(replayed.status == 0, "\(replayed.stderr)")
        #expect(replayed.stdout.contains(#""forgotten":true"#))
        #expect(cluster.stopQuery() == 0, "the read models closed cleanly, their journal checkpointed")

        // No file of the worker or of the backup holds a personal value in clear, nor any
        // address's keyed hash; no file of the query process, and no process's log, holds a
        // forgotten user's.
        let master = try MasterKey.read(path: cluster.workerDataDirectory + "/master.key")
        let sealed = try Self.bytes(in: cluster.workerDataDirectory).merging(
            try Self.bytes(in: backup).map { ("backup/" + $0.key, $0.value) }
        ) { $1 }
        #expect(Set(sealed.keys).isSuperset(of: ["events.sqlite3", "keys.sqlite3", "backup/events.sqlite3"]))
        let readModels = try Self.bytes(in: cluster.queryDataDirectory)
        #expect(readModels.keys.contains { $0.hasPrefix("readmodels-") })
        let logs = ["worker", "query"].map { Data(cluster.stderr(of: $0).utf8) }
        // The scans see what was written: a post's title, not personal, is in the log; a kept
        // user's name is in the read models.
        #expect(sealed["events.sqlite3"]?.range(of: Data("Post post-\(canaries[0].id)".utf8)) != nil)
        #expect(readModels.values.contains { $0.range(of: Data(kept[1].name.utf8)) != nil })
        func needles(_ canary: Canary) -> [String] {
            let address = Array(canary.email.lowercased().utf8)
            return [
                canary.name, canary.renamed, canary.email, canary.email.lowercased(),
                Hex.encode(KeyedHash.hash(address, key: master.emailHashKey, byteCount: 16)),
                Hex.encode(KeyedHash.hash(address, key: master.emailHashKey)),
            ]
        }
        var found: [String] = []
        for canary in canaries {
            for needle in needles(canary) {
                let bytes = Data(needle.utf8)
                for (name, data) in sealed where data.range(of: bytes) != nil { found.append("\(name): \(needle)") }
            }
        }
        for canary in forgotten {
            for needle in needles(canary) {
                let bytes = Data(needle.utf8)
                for (name, data) in readModels where data.range(of: bytes) != nil { found.append("\(name): \(needle)") }
                for log in logs where log.range(of: bytes) != nil { found.append("a process log: \(needle)") }
            }
        }
        #expect(found.isEmpty, "\(found.prefix(10))")

        // The address of a forgotten user is free for someone else.
        let again = try await client.send(
            type: "RegisterUser", data: Fixture.user("pd-new", email: forgotten[1].email.uppercased()))
        #expect(again.events.map(\.type) == ["UserRegistered", "EmailClaimed"])
        let verify = try await runLogbook(["verify", "--data-dir", cluster.workerDataDirectory])
        #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
    }

    @Test("a worker with another master key, or none for a key store that holds keys, stops with one line, exit 3")
    func masterKeyRefusals() async throws {
        let cluster = try await ServiceCluster.started()
        let client = try cluster.client()
        defer { client.close() }
        _ = try await client.send(type: "RegisterUser", data: Fixture.user("mk-1"))
        #expect(cluster.stopWorker() == 0)
        let other = cluster.directory.appendingPathComponent("other.key").path
        let made = try await runLogbook(["keygen", "--master", other])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(try made.json() == ["masterKey": .string(other)])
        #expect(try await runLogbook(["keygen", "--master", other]).status == 3, "a key file is never replaced")
        let data = cluster.workerDataDirectory
        let wrong = try await runLogbook(
            ["run", "worker", "--data-dir", data, "--master-key", other] + cluster.settings)
        #expect(wrong.status == 3)
        #expect(wrong.stderr.contains("not the one the key store was written under"), "\(wrong.stderr)")
        #expect(wrong.stderr.split(separator: "\n").count == 1, "\(wrong.stderr)")
        try FileManager.default.moveItem(atPath: data + "/master.key", toPath: data + "/moved.key")
        let missing = try await runLogbook(["run", "worker", "--data-dir", data] + cluster.settings)
        #expect(missing.status == 3)
        #expect(missing.stderr.contains("none was given"), "\(missing.stderr)")
        #expect(
            !FileManager.default.fileExists(atPath: data + "/master.key"), "no new key over a store that holds keys")
        // The right key, named, serves the log as it was.
        let right = try await runLogbook(["verify", "--data-dir", data, "--master-key", data + "/moved.key"])
        #expect(right.status == 0, "\(right.stdout) \(right.stderr)")
    }
}
