import Glibc
import LogbookJSON
import LogbookWire
import LogbookZMQ

/// Logbook scaled out on one PostgreSQL database: a feed process (`logbook run feed`) and N
/// workers (`logbook run worker --store … --hints <the feed's>`), each on its own free
/// loopback ports, started by the bench as its children; each answers `Status` before the
/// bench goes on.
struct SharedLogService {
    struct Worker {
        let pid: pid_t
        let commands: String
    }

    let workers: [Worker]
    let feedPid: pid_t
    /// The feed process's change feed.
    let feed: String

    /// The workers' commands endpoints, in start order.
    var commandEndpoints: [String] { workers.map(\.commands) }

    /// Starts the feed process first (it binds the hints endpoint), then the workers.
    static func start(
        workers count: Int, executable: String, store: String, dataDirectory: String, logDirectory: String,
        children: ChildProcesses, context: ZMQContext
    ) throws(BenchError) -> SharedLogService {
        let ports = try FreePorts.take(3 + 2 * count)
        let endpoint = { (index: Int) in "tcp://127.0.0.1:\(ports[index])" }
        let common = ["--store", store, "--data-dir", dataDirectory, "--log-level", "warning", "--hints", endpoint(2)]
        let feedPid = try children.spawn(
            name: "the feed process", executable: executable,
            arguments: ["run", "feed", "--feed", endpoint(0), "--log", endpoint(1)] + common,
            logPath: logDirectory + "/feed.log")
        var started = SharedLogService(workers: [], feedPid: feedPid, feed: endpoint(0))
        do throws(BenchError) {
            try waitForLogReads(endpoint(1), pid: feedPid, children: children, context: context)
            var workers: [Worker] = []
            for index in 0..<count {
                let commands = endpoint(3 + 2 * index)
                let pid = try children.spawn(
                    name: "worker \(index + 1)", executable: executable,
                    arguments: ["run", "worker", "--commands", commands, "--log", endpoint(4 + 2 * index)] + common,
                    logPath: logDirectory + "/worker-\(index + 1).log")
                workers.append(Worker(pid: pid, commands: commands))
                started = SharedLogService(workers: workers, feedPid: feedPid, feed: endpoint(0))
                var client = try ControlClient(context, endpoint: commands)
                _ = try LogbookService.waitForStatus(
                    &client, pid: pid, name: "worker \(index + 1)", children: children
                ) { _ in true }
            }
            return started
        } catch {
            _ = started.stop(children: children)
            throw error
        }
    }

    /// A feed process answers no `Status`: it is ready when its log socket answers `ReadLog`.
    private static func waitForLogReads(
        _ endpoint: String, pid: pid_t, children: ChildProcesses, context: ZMQContext
    ) throws(BenchError) {
        var client = try ControlClient(context, endpoint: endpoint)
        let deadline = BenchClock.nanoseconds() + UInt64(LogbookService.startupMilliseconds) * 1_000_000
        while BenchClock.nanoseconds() < deadline {
            guard children.isRunning(pid) else {
                throw BenchError("the feed process ended at start:\n\(children.logTail(pid))")
            }
            if try client.requestBytes(.readLog, ["from": .int(1), "limit": .int(1)], timeoutMilliseconds: 200) != nil {
                return
            }
        }
        throw BenchError(
            "the feed process did not answer ReadLog within \(LogbookService.startupMilliseconds / 1000) s")
    }

    /// Stops the workers, then the feed process; reports any that did not exit 0.
    func stop(children: ChildProcesses) -> [String] {
        var problems: [String] = []
        for (index, worker) in workers.enumerated() where children.stop(worker.pid) != 0 {
            problems.append("worker \(index + 1) on PostgreSQL did not exit cleanly")
        }
        if children.stop(feedPid) != 0 { problems.append("the feed process did not exit cleanly") }
        return problems
    }
}
