import Glibc
import Synchronization

/// The programs the bench started (the worker, the query process, Redis, PostgreSQL), so
/// that every one of them is stopped at the end, after a failure and on Ctrl-C, whichever
/// comes first. Each child runs in a process group of its own, so a Ctrl-C in the terminal
/// reaches only the bench, which then stops them in order; its stdout and stderr go to a
/// log file (the table on stdout stays readable).
final class ChildProcesses: Sendable {
    struct Child: Sendable {
        let name: String
        let logPath: String
        /// The signal that asks it to stop (SIGTERM; SIGINT for PostgreSQL's fast shutdown).
        let stopSignal: Int32
    }

    private let running = Mutex<[pid_t: Child]>([:])
    /// How long a child gets to stop after its stop signal before it is killed.
    static let graceMilliseconds = 10_000

    init() {}

    /// Starts `executable` with `arguments`, its output appended to `logPath`.
    func spawn(
        name: String, executable: String, arguments: [String], logPath: String, stopSignal: Int32 = SIGTERM
    ) throws(BenchError) -> pid_t {
        let argv = ([executable] + arguments).map { strdup($0) }
        defer { for argument in argv { free(argument) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The child starts with no signal blocked (the bench blocks SIGINT and SIGTERM to
        // wait for them), in a process group of its own.
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP))
        var pid: pid_t = 0
        var terminated = argv + [nil]
        let result = terminated.withUnsafeMutableBufferPointer { pointers in
            guard let base = pointers.baseAddress else { return EINVAL }
            return posix_spawn(&pid, executable, &actions, &attributes, base, environ)
        }
        guard result == 0 else {
            throw BenchError("cannot start \(name) (\(executable)): \(String(cString: strerror(result)))")
        }
        running.withLock { $0[pid] = Child(name: name, logPath: logPath, stopSignal: stopSignal) }
        return pid
    }

    /// Whether the child is still running; reaps it when it has ended.
    func isRunning(_ pid: pid_t) -> Bool {
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        if result == 0 { return true }
        running.withLock { _ = $0.removeValue(forKey: pid) }
        return false
    }

    /// The last lines a child wrote, for an error message.
    func logTail(_ pid: pid_t, lines: Int = 5) -> String {
        guard let child = running.withLock({ $0[pid] }) else { return "" }
        return Self.tail(of: child.logPath, lines: lines)
    }

    static func tail(of path: String, lines: Int) -> String {
        guard let handle = fopen(path, "r") else { return "" }
        defer { fclose(handle) }
        var text: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while case let count = fread(&buffer, 1, buffer.count, handle), count > 0 { text += buffer.prefix(count) }
        return String(decoding: text, as: UTF8.self).split(separator: "\n").suffix(lines).joined(separator: "\n")
    }

    /// Waits for a child that ends on its own (a setup program); returns its exit status,
    /// or nil when a signal ended it.
    func wait(_ pid: pid_t) -> Int32? {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        running.withLock { _ = $0.removeValue(forKey: pid) }
        return status & 0x7f == 0 ? (status >> 8) & 0xff : nil
    }

    /// Asks one child to stop and waits for it (killing it after the grace period).
    /// Returns its exit status, or nil when it was killed by a signal.
    @discardableResult
    func stop(_ pid: pid_t) -> Int32? {
        guard let child = running.withLock({ $0.removeValue(forKey: pid) }) else { return nil }
        return Self.stop([(pid, child)])[pid] ?? nil
    }

    /// Stops every child still running. Safe to call from any thread, more than once.
    func stopAll() {
        let children = running.withLock { all in
            defer { all.removeAll() }
            return all.map { ($0.key, $0.value) }
        }
        Self.stop(children)
    }

    @discardableResult
    private static func stop(_ children: [(pid_t, Child)]) -> [pid_t: Int32?] {
        for (pid, child) in children { kill(pid, child.stopSignal) }
        var remaining = Set(children.map(\.0))
        var statuses: [pid_t: Int32?] = [:]
        var waited = 0
        var killed = false
        while !remaining.isEmpty {
            for pid in remaining {
                var status: Int32 = 0
                let result = waitpid(pid, &status, WNOHANG)
                guard result != 0 else { continue }
                remaining.remove(pid)
                // Exited normally: its exit code; killed by a signal: nil.
                statuses[pid] = result == pid && status & 0x7f == 0 ? (status >> 8) & 0xff : nil
            }
            if remaining.isEmpty { break }
            if !killed && waited >= graceMilliseconds {
                for pid in remaining { kill(pid, SIGKILL) }
                killed = true
            }
            usleep(10_000)
            waited += 10
        }
        return statuses
    }
}
