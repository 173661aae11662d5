import Foundation
import Glibc
import LogbookApplication
import LogbookClient
import LogbookJSON
import Testing

/// Clients on several workers (ARCHITECTURE §10): two real workers on one
/// data directory, a client given both commands endpoints. A worker stopped or killed with
/// SIGKILL while commands are in flight costs no command, and none is appended twice.
@Suite("End to end: clients on several workers", .serialized)
struct SeveralWorkersTests {
    /// A cluster's worker (without a query process) and a peer on the same log.
    static func twoWorkers() async throws -> (ServiceCluster, PeerWorker) {
        let cluster = try ServiceCluster()
        try await cluster.startWorker()
        let peer = try PeerWorker()
        try await cluster.start(peer)
        return (cluster, peer)
    }

    /// How many events of the whole log each command id produced.
    static func eventsPerCommand(_ cluster: ServiceCluster) async throws -> [String: Int] {
        try await cluster.wholeLog().reduce(into: [:]) { counts, event in
            counts[event.metadata.commandId, default: 0] += 1
        }
    }

    /// Two workers and a client given both (the peer first), with attempts of 1 s, that has
    /// reached each of them.
    static func twoWorkersAndAClientOfBoth() async throws -> (ServiceCluster, PeerWorker, LogbookClient) {
        let (cluster, peer) = try await twoWorkers()
        let client = try cluster.client(
            commands: [peer.commands, cluster.commands], timeout: .seconds(1), attempts: 10)
        try await connectToBoth(client)
        return (cluster, peer, client)
    }

    /// Sends commands over `client` until every worker listed has accepted one, so its
    /// socket has a connection to each (and libzmq round-robins over both).
    static func connectToBoth(_ client: LogbookClient) async throws {
        for round in 0..<50 {
            _ = try await client.send(type: "AddProduct", data: Fixture.product("warm\(round)"))
            let accepted = await client.statusOfEachWorker().map { answer in
                (try? answer.outcome.get())?["commands"]?["accepted"]?.intValue ?? 0
            }
            if accepted.allSatisfy({ $0 > 0 }) { return }
        }
        Issue.record("the client never reached both workers")
    }

    @Test("commands whose first attempt went to a worker that stopped answering are answered by the other, once")
    func stoppedWorker() async throws {
        let (cluster, peer, client) = try await Self.twoWorkersAndAClientOfBoth()
        defer { client.close() }

        // Stopped, the peer keeps its connections but answers nothing: libzmq round-robins
        // every second command to it, and each of those must be retried on the other worker.
        // (Waiting until it is stopped: a worker stopped inside an append would hold the
        // SQLite write lock that the other worker needs.)
        #expect(await cluster.pause(peer))
        let ids = (1...6).map { "stalled-\($0)" }
        let positions = try await withThrowingTaskGroup(of: Int64.self) { group in
            for id in ids {
                group.addTask {
                    try await client.send(type: "AddProduct", data: Fixture.product(id), commandId: id).position
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(positions).count == ids.count)
        cluster.signal(peer, SIGKILL)

        let counts = try await Self.eventsPerCommand(cluster)
        for id in ids { #expect(counts[id] == 1, "\(id) appended \(counts[id] ?? 0) times") }
        #expect(cluster.errorLines(of: "worker").isEmpty)
    }

    @Test("a command the killed worker appended is answered by the other with its first outcome, appended once")
    func killedAfterAppending() async throws {
        let (cluster, peer) = try await Self.twoWorkers()
        // The first attempt reached the peer, which appended the command; its reply was lost
        // when the peer was killed.
        let direct = try LogbookClient(endpoints: peer.endpoints(in: cluster), timeout: .seconds(5), attempts: 1)
        let first = try await direct.send(type: "AddProduct", data: Fixture.product("once"), commandId: "once")
        direct.close()
        cluster.signal(peer, SIGKILL)

        let client = try cluster.client(commands: [peer.commands, cluster.commands], timeout: .seconds(2), attempts: 5)
        defer { client.close() }
        let again = try await client.send(type: "AddProduct", data: Fixture.product("once"), commandId: "once")
        #expect(again == first)
        #expect(try await Self.eventsPerCommand(cluster)["once"] == 1)
        let status = try await client.status(of: .commands)
        #expect(status["commands"]?["retries"] == 1)
    }

    @Test("a worker killed with SIGKILL while commands are in flight: every command answered, none appended twice")
    func killedUnderLoad() async throws {
        let (cluster, peer, client) = try await Self.twoWorkersAndAClientOfBoth()
        defer { client.close() }

        let answered = Shared(0)
        let ids = (1...80).map { "load-\($0)" }
        let load = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for wave in stride(from: 0, to: ids.count, by: 8) {
                    for id in ids[wave..<min(wave + 8, ids.count)] {
                        group.addTask {
                            _ = try await client.send(type: "AddProduct", data: Fixture.product(id), commandId: id)
                            answered.update { $0 += 1 }
                        }
                    }
                    try await group.waitForAll()
                }
            }
        }
        _ = await eventually { answered.value >= 12 }
        cluster.signal(peer, SIGKILL)
        try await load.value

        #expect(answered.value == ids.count)
        let counts = try await Self.eventsPerCommand(cluster)
        for id in ids { #expect(counts[id] == 1, "\(id) appended \(counts[id] ?? 0) times") }
    }

    @Test("logbook send --commands a,b works when a is down; status asks each worker; a worker refuses a list")
    func commandLine() async throws {
        let (cluster, peer) = try await Self.twoWorkers()
        cluster.signal(peer, SIGKILL)
        let both = "\(peer.commands),\(cluster.commands)"
        let data = #"{"productId":"cli","name":"Tea","price":"2.50","category":"food","stock":3}"#

        let sent = try await runLogbook(["send", "AddProduct", data, "--id", "cli-1", "--commands", both])
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(try sent.json()["ok"] == true)
        let again = try await runLogbook(
            ["send", "AddProduct", data, "--id", "cli-1"], environment: ["LOGBOOK_COMMANDS": both])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try again.json()["position"] == sent.json()["position"])
        #expect(try await Self.eventsPerCommand(cluster)["cli-1"] == 1)

        let status = try await runLogbook(
            ["status", "--commands", both, "--queries", cluster.queries, "--timeout-ms", "300", "--attempts", "1"])
        #expect(status.status == 1)
        let report = try status.json()
        #expect(report.keys == ["workers", "query"])
        let workers = try #require(report["workers"]?.objectValue)
        #expect(workers.keys == [peer.commands, cluster.commands])
        #expect(workers[peer.commands]?["unreachable"]?.stringValue?.contains(peer.commands) == true)
        #expect(workers[cluster.commands]?["role"] == "worker")

        let refused = try await runLogbook([
            "run", "worker", "--data-dir", cluster.workerDataDirectory, "--commands", both,
        ])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("a worker binds one"), "\(refused.stderr)")
    }
}
