import Glibc
import LogbookCommandLine

/// `/bin/sh -c COMMAND` as a child that starts as if from a shell (no signal blocked, SIGPIPE,
/// SIGINT and SIGTERM at their defaults, in a process group of its own so that a Ctrl-C
/// meant for `consume` lets it finish its event), with `input` on its stdin and this
/// process's stdout and stderr. Waited for with `waitpid`: it is done the moment it exits,
/// even when something it started in the background lives on.
enum ShellCommand {
    static func run(_ command: String, input: [UInt8], environment: [String: String]) throws(CLIError) -> Int32 {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            throw .unavailable("cannot make a pipe for /bin/sh -c \(command): \(String(cString: strerror(errno)))")
        }
        let (readEnd, writeEnd) = (ends[0], ends[1])
        // Neither end stays open in the child (its stdin is a copy of the read end): else it
        // would hold the write end itself and never read the end of its input.
        _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, readEnd, 0)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        let argv = (["/bin/sh", "-c", command] as [String]).map { strdup($0) }
        let envp = environment.map { strdup("\($0.key)=\($0.value)") }
        defer { for string in argv + envp { free(string) } }
        var arguments = argv + [nil]
        var variables = envp + [nil]
        var pid: pid_t = 0
        let spawned = arguments.withUnsafeMutableBufferPointer { arguments in
            variables.withUnsafeMutableBufferPointer { variables in
                guard let argv = arguments.baseAddress, let envp = variables.baseAddress else { return EINVAL }
                return posix_spawn(&pid, "/bin/sh", &actions, &attributes, argv, envp)
            }
        }
        close(readEnd)
        guard spawned == 0 else {
            close(writeEnd)
            throw .unavailable("cannot run /bin/sh -c \(command): \(String(cString: strerror(spawned)))")
        }
        // A command that does not read its stdin closes the pipe (SIGPIPE is ignored here, see
        // `ConsumeCommand.run`): its exit status alone says how it went.
        input.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress else { return }
            var written = 0
            while written < bytes.count {
                let count = write(writeEnd, base + written, bytes.count - written)
                if count > 0 {
                    written += count
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
        }
        close(writeEnd)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else {
                throw .unavailable("cannot wait for /bin/sh -c \(command): \(String(cString: strerror(errno)))")
            }
        }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }
}
