import Foundation
import Glibc
import LogbookClient
import LogbookZMQ

/// Another worker of a cluster (ARCHITECTURE §10): the same data directory as the
/// cluster's worker (SQLite lets several processes take turns writing one log, and a
/// command id recorded by one is answered with its first outcome by the other), and
/// endpoints of its own. Its stderr goes to `worker-PORT.log`.
struct PeerWorker: Sendable {
    let commands: String
    let feed: String
    let log: String

    init() throws {
        let ports = try FreePorts.take(3)
        commands = "tcp://127.0.0.1:\(ports[0])"
        feed = "tcp://127.0.0.1:\(ports[1])"
        log = "tcp://127.0.0.1:\(ports[2])"
    }

    var role: String { "worker-\(commands.split(separator: ":").last ?? "")" }

    /// This worker alone, for a client that must reach exactly it.
    func endpoints(in cluster: ServiceCluster) -> ClientEndpoints {
        ClientEndpoints(commands: commands, feed: feed, queries: cluster.queries, log: log)
    }
}

extension ServiceCluster {
    /// Starts `peer` (again, after a stop) and waits until it answers `Status`.
    func start(_ peer: PeerWorker) async throws {
        let starts = startLines(of: peer.role)
        let process = try launch(
            ["run", "worker", "--data-dir", workerDataDirectory],
            peer.role, settings: ["--commands", peer.commands, "--feed", peer.feed, "--log", peer.log])
        peers[peer.commands] = process
        try await waitUntilAnswering(.commands, process, role: peer.role, after: starts, at: peer.endpoints(in: self))
    }

    /// Sends `signal` to `peer`; for a signal that ends it, waits until it ended.
    func signal(_ peer: PeerWorker, _ signal: Int32) {
        guard let process = peers[peer.commands] else { return }
        kill(process.processIdentifier, signal)
        guard signal == SIGKILL || signal == SIGTERM else { return }
        process.waitUntilExit()
        peers[peer.commands] = nil
    }

    /// Stops `peer` with SIGSTOP and waits until every one of its threads is stopped, so
    /// that nothing it receives afterwards is read (nor takes the log's write lock).
    func pause(_ peer: PeerWorker) async -> Bool {
        guard let pid = peers[peer.commands]?.processIdentifier else { return false }
        kill(pid, SIGSTOP)
        return await eventually { everyThreadStopped(pid) }
    }

    /// A client whose commands go to every worker listed (in that order); its queries and
    /// log reads go to this cluster's.
    func client(commands: [String], timeout: Duration, attempts: Int) throws -> LogbookClient {
        var endpoints = self.endpoints
        endpoints.commands = try EndpointList(commands)
        return try LogbookClient(endpoints: endpoints, timeout: timeout, attempts: attempts)
    }
}

/// Whether every thread of `pid` is stopped (state `T` in `/proc/PID/task/TID/stat`).
func everyThreadStopped(_ pid: pid_t) -> Bool {
    guard let threads = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task"), !threads.isEmpty
    else { return false }
    return threads.allSatisfy { thread in
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        let state = stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first
        return state == "T" || state == "t"
    }
}
