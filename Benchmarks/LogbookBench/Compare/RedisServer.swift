import Foundation
import Glibc

/// A Redis server the bench starts for the comparison: on a free loopback port, in a
/// directory of its own, with the append-only file fsynced before every reply
/// (`appendonly yes`, `appendfsync always`), the durability Logbook gives.
struct RedisServer {
    let port: Int
    let pid: pid_t
    let version: String

    /// `redis-server` on the PATH, or nil.
    static func executable() -> String? {
        ProgramSearch.onPath("redis-server")
    }

    static func start(
        executable: String, directory: String, logDirectory: String, children: ChildProcesses
    ) throws(BenchError) -> RedisServer {
        let port = try FreePorts.take(1)[0]
        let pid = try children.spawn(
            name: "redis-server", executable: executable,
            arguments: [
                "--port", "\(port)", "--bind", "127.0.0.1", "--dir", directory, "--appendonly", "yes",
                "--appendfsync", "always", "--save", "", "--daemonize", "no", "--protected-mode", "no",
            ],
            logPath: logDirectory + "/redis.log")
        let deadline = BenchClock.nanoseconds() + 10_000_000_000
        while BenchClock.nanoseconds() < deadline {
            guard children.isRunning(pid) else {
                throw BenchError(
                    "redis-server ended at start:\n\(ChildProcesses.tail(of: logDirectory + "/redis.log", lines: 5))")
            }
            if let connection = try? TCPConnection(port: port) {
                let fsync = try connection.call(RESP.command(["CONFIG", "GET", "appendfsync"]))
                guard String(decoding: fsync, as: UTF8.self).contains("always") else {
                    children.stop(pid)
                    throw BenchError("redis-server did not take appendfsync always")
                }
                let info = String(decoding: try connection.call(RESP.command(["INFO", "server"])), as: UTF8.self)
                let version =
                    info.split(whereSeparator: \.isNewline).first { $0.hasPrefix("redis_version:") }
                    .map { String($0.dropFirst("redis_version:".count)) } ?? "unknown"
                return RedisServer(port: port, pid: pid, version: version)
            }
            BenchClock.sleep(milliseconds: 20)
        }
        children.stop(pid)
        throw BenchError("redis-server did not accept connections within 10 s")
    }
}
