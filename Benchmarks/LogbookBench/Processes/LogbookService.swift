import Glibc
import LogbookJSON
import LogbookZMQ

/// The real service under test: `logbook run worker` and `logbook run query`, started as
/// children of the bench on free loopback ports with a data directory of the bench's, each
/// answering `Status` before the bench goes on.
struct LogbookService {
    let endpoints: ServiceEndpoints
    let workerPid: pid_t
    let queryPid: pid_t
    /// How long the fresh query process took, from its start, to apply the log the worker
    /// already held, and how many events that was.
    let catchUpSeconds: Double
    let catchUpEvents: Int

    /// How long a starting process may take to answer `Status`.
    static let startupMilliseconds = 30_000
    /// How long the query process may take to apply the log the worker holds at start.
    static let catchUpMilliseconds = 1_200_000

    /// Starts the worker, waits for its `Status`, then starts the query process and waits
    /// until it has applied everything the worker holds. With `keys`, every server socket is
    /// a CURVE server and the bench's own calls present the bench's key.
    static func start(
        executable: String, dataDirectory: String, logDirectory: String, children: ChildProcesses,
        context: ZMQContext, keys: BenchKeys? = nil
    ) throws(BenchError) -> LogbookService {
        let ports = try FreePorts.take(4)
        let endpoints = ServiceEndpoints(
            commands: "tcp://127.0.0.1:\(ports[0])", feed: "tcp://127.0.0.1:\(ports[1])",
            queries: "tcp://127.0.0.1:\(ports[2])", log: "tcp://127.0.0.1:\(ports[3])")
        let settings =
            [
                "--data-dir", dataDirectory, "--commands", endpoints.commands, "--feed", endpoints.feed, "--queries",
                endpoints.queries, "--log", endpoints.log, "--log-level", "warning",
            ] + (keys?.serverArguments ?? [])
        let worker = try children.spawn(
            name: "the worker", executable: executable, arguments: ["run", "worker"] + settings,
            logPath: logDirectory + "/worker.log")
        var workerClient = try ControlClient(context, endpoint: endpoints.commands, keys: keys?.client)
        let workerStatus = try waitForStatus(&workerClient, pid: worker, name: "worker", children: children) { _ in true
        }
        let head = workerStatus["head"]?.intValue ?? 0

        let queryStarted = BenchClock.nanoseconds()
        let query = try children.spawn(
            name: "the query process", executable: executable,
            arguments: ["run", "query"] + settings + (keys?.queryArguments ?? []),
            logPath: logDirectory + "/query.log")
        var queryClient = try ControlClient(context, endpoint: endpoints.queries, keys: keys?.client)
        _ = try waitForStatus(&queryClient, pid: query, name: "query process", children: children) { _ in true }
        _ = try waitForStatus(
            &queryClient, pid: query, name: "query process", children: children, within: catchUpMilliseconds
        ) { status in
            (status["checkpoint"]?.intValue ?? -1) >= head
        }
        return LogbookService(
            endpoints: endpoints, workerPid: worker, queryPid: query,
            catchUpSeconds: BenchClock.seconds(since: queryStarted), catchUpEvents: head)
    }

    /// Polls `Status` until `isReady` accepts it; fails when the process ends or the time is up.
    static func waitForStatus(
        _ client: inout ControlClient, pid: pid_t, name: String, children: ChildProcesses,
        within milliseconds: Int = startupMilliseconds, isReady: (JSONObject) -> Bool
    ) throws(BenchError) -> JSONObject {
        let deadline = BenchClock.nanoseconds() + UInt64(milliseconds) * 1_000_000
        while BenchClock.nanoseconds() < deadline {
            guard children.isRunning(pid) else {
                throw BenchError("the \(name) ended at start:\n\(children.logTail(pid))")
            }
            if let status = try client.status(timeoutMilliseconds: 200), isReady(status) { return status }
            BenchClock.sleep(milliseconds: 10)
        }
        throw BenchError("the \(name) did not become ready within \(milliseconds / 1000) s")
    }

    /// Stops both processes (query first, then the worker); reports one that did not exit 0.
    func stop(children: ChildProcesses) -> [String] {
        var problems: [String] = []
        if children.stop(queryPid) != 0 { problems.append("the query process did not exit cleanly") }
        if children.stop(workerPid) != 0 { problems.append("the worker did not exit cleanly") }
        return problems
    }
}
