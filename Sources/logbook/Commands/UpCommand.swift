import Glibc
import LogbookCommandLine
import LogbookMetrics

/// `logbook up`: runs a worker, a query process and a groups process as children (for
/// development), all with this command's settings and its stdout and stderr. SIGINT or
/// SIGTERM stops them; if a child ends on its own, the others are stopped too and `up`
/// fails. SIGHUP is passed on to each (they read their allow-lists again). `--secure` makes
/// a development key set in the data directory (`DevelopmentKeys`) and runs them with CURVE on.
struct UpCommand: ConfiguredCommand {
    static let secure = OptionSpec.flag(
        "secure", "CURVE on: make (once) a key set in DIR/keys and print how the command line uses it")

    static let spec = CommandSpec(
        name: "up", usage: "[options]",
        listings: [.init("up", "run a worker, a query and a groups process (Ctrl-C stops them)")],
        section: .processes,
        description: """
            Runs a worker, a query process and a groups process as child processes with these
            settings, all logging to this terminal. Ctrl-C or SIGTERM stops them; if one ends
            on its own, the others are stopped and up exits 3. SIGHUP is passed on to each.
            """,
        options: [secure], settings: Configuration.settings + Configuration.metricsSettings)

    let arguments: Arguments
    let configuration: Configuration
    let output: StandardStreams

    func run() throws(CLIError) -> ExitStatus {
        guard arguments.positionals.isEmpty else { throw .usage("up takes no positional arguments") }
        // Its worker binds one commands endpoint: refuse a list here, before starting anything.
        _ = try configuration.workerEndpoints()
        let metrics = try childMetrics()
        let keys = try developmentKeys()
        ProcessSignals.block(including: [SIGCHLD, SIGHUP])
        let executable = try ExecutablePath.own()
        var children: [(role: String, pid: pid_t)] = []
        for role in ["worker", "query", "groups"] {
            let security = keys?.arguments(for: role) ?? []
            do {
                // up is SQLite only: a LOGBOOK_STORE in the environment must not move its worker.
                let storage = role == "worker" ? [OptionSpec.store.flag, "sqlite"] : []
                children.append(
                    (
                        role,
                        try Self.spawn(
                            executable,
                            ["run", role] + configuration.childArguments + storage + security + (metrics[role] ?? []))
                    ))
            } catch {
                Self.stop(children)
                throw error
            }
        }
        if let keys { output.out(keys.hint) }
        var status = ExitStatus.success
        while !children.isEmpty {
            let signal = ProcessSignals.wait(including: [SIGCHLD, SIGHUP])
            if signal == SIGHUP {
                for child in children { kill(child.pid, SIGHUP) }
                continue
            }
            if signal != SIGCHLD {
                Self.stop(children)
                break
            }
            var code: Int32 = 0
            while case let pid = waitpid(-1, &code, WNOHANG), pid > 0 {
                guard let index = children.firstIndex(where: { $0.pid == pid }) else { continue }
                let role = children.remove(at: index).role
                output.error("up: the \(role) process ended (\(Self.describe(code))); stopping the rest")
                status = .unavailable
                Self.stop(children)
                children.removeAll()
            }
        }
        return status
    }

    /// With `--metrics HOST:PORT`, each child's flag: the worker serves on PORT, the query
    /// process on PORT+1, the groups process on PORT+2 (all on 0 when PORT is 0: the kernel
    /// chooses). None without it.
    private func childMetrics() throws(CLIError) -> [String: [String]] {
        guard let address = configuration.metrics else { return [:] }
        guard address.port < UInt16.max - 1 else {
            throw .usage("--metrics: up needs three ports, PORT to PORT+2; \(address.port) leaves too few")
        }
        func flag(_ offset: UInt16) -> [String] {
            let port = address.port == 0 ? 0 : address.port + offset
            return [OptionSpec.metrics.flag, MetricsAddress(host: address.host, port: port).description]
        }
        return ["worker": flag(0), "query": flag(1), "groups": flag(2)]
    }

    /// With `--secure`, the development key set (made when missing); nil otherwise.
    private func developmentKeys() throws(CLIError) -> DevelopmentKeys? {
        guard arguments.isSet(Self.secure) else { return nil }
        let given = [configuration.curveSecret, configuration.clients, configuration.curveKey, configuration.serverKey]
        guard given.allSatisfy({ $0 == nil }) else {
            throw .usage(
                "--secure makes its own keys: drop the --curve-secret, --clients, --curve-key and --server-key settings"
            )
        }
        try configuration.ensureDataDirectory()
        let keys = DevelopmentKeys(dataDirectory: configuration.dataDirectory)
        try keys.ensure()
        return keys
    }

    /// How long children get to stop after SIGTERM before they are killed.
    static let stopGraceMilliseconds = 10_000

    /// Sends SIGTERM to each child and waits for it; one still running after the grace
    /// period gets SIGKILL.
    private static func stop(_ children: [(role: String, pid: pid_t)]) {
        for child in children { kill(child.pid, SIGTERM) }
        var running = children.map(\.pid)
        var waited = 0
        var killed = false
        while true {
            running.removeAll { pid in
                var code: Int32 = 0
                return waitpid(pid, &code, WNOHANG) != 0
            }
            if running.isEmpty { return }
            if !killed && waited >= stopGraceMilliseconds {
                for pid in running { kill(pid, SIGKILL) }
                killed = true
            }
            usleep(20_000)
            waited += 20
        }
    }

    private static func describe(_ code: Int32) -> String {
        let signal = code & 0x7f
        return signal == 0 ? "exit status \((code >> 8) & 0xff)" : "signal \(signal)"
    }

    private static func spawn(_ executable: String, _ arguments: [String]) throws(CLIError) -> pid_t {
        let argv = ([executable] + arguments).map { strdup($0) }
        defer { for argument in argv { free(argument) } }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The children start with no signal blocked, as if started from a shell.
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        var pid: pid_t = 0
        var terminated = argv + [nil]
        let result = terminated.withUnsafeMutableBufferPointer { pointers in
            posix_spawn(&pid, executable, nil, &attributes, pointers.baseAddress!, environ)
        }
        guard result == 0 else {
            throw .unavailable("cannot start \(arguments.joined(separator: " ")): errno \(result)")
        }
        return pid
    }
}
