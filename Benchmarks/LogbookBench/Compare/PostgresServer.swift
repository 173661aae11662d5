import CPostgres
import Foundation
import Glibc

/// A PostgreSQL cluster the bench creates for the comparison: `initdb` into a fresh
/// directory, `postgres` on a free loopback port with every commit flushed before it is
/// acknowledged (`fsync=on`, `synchronous_commit=on`), one table shaped like a log. The
/// server refuses to run as root, so under root it runs as the `postgres` user.
struct PostgresServer {
    let port: Int
    let pid: pid_t
    let version: String
    let directory: ScratchDirectory

    /// The newest PostgreSQL server binaries installed the Debian way, or nil.
    static func binaries() -> (directory: String, version: String)? {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .compactMap { name in Int(name).map { (name, $0) } }
            .sorted { $0.1 > $1.1 }
        for (name, _) in versions {
            let bin = "\(root)/\(name)/bin"
            if access(bin + "/initdb", X_OK) == 0 && access(bin + "/postgres", X_OK) == 0 { return (bin, name) }
        }
        return nil
    }

    /// The connection string for the cluster's database.
    var connectionString: String { Self.connectionString(port: port) }

    static func connectionString(port: Int, database: String = "postgres") -> String {
        "host=127.0.0.1 port=\(port) user=bench dbname=\(database) connect_timeout=5"
    }

    static func start(
        binaries: (directory: String, version: String), maxConnections: Int, logDirectory: String,
        children: ChildProcesses, register: (ScratchDirectory) -> Void
    ) throws(BenchError) -> PostgresServer {
        // As root: run as the postgres user, who must own the cluster's directory.
        var prefix: [String] = []
        var owner: (uid: uid_t, gid: gid_t)?
        if getuid() == 0 {
            guard let account = getpwnam("postgres"), let setpriv = ProgramSearch.onPath("setpriv") else {
                throw BenchError("running as root, and there is no postgres user or setpriv to run PostgreSQL as")
            }
            owner = (account.pointee.pw_uid, account.pointee.pw_gid)
            prefix = [setpriv, "--reuid=postgres", "--regid=postgres", "--init-groups", "--"]
        }
        let directory = try ScratchDirectory.temporary(prefix: "logbook-bench-postgres")
        register(directory)
        if let owner, chown(directory.path, owner.uid, owner.gid) != 0 {
            directory.cleanUp()
            throw BenchError("cannot hand \(directory.path) to the postgres user: \(String(cString: strerror(errno)))")
        }
        do throws(BenchError) {
            let data = directory.file("data")
            let log = logDirectory + "/postgres.log"
            let initdb =
                prefix + [
                    binaries.directory + "/initdb", "-D", data, "-U", "bench", "--auth=trust", "-E", "UTF8",
                    "--locale=C",
                    "--no-sync",
                ]
            let initPid = try children.spawn(
                name: "initdb", executable: initdb[0], arguments: Array(initdb.dropFirst()), logPath: log)
            guard children.wait(initPid) == 0 else {
                throw BenchError("initdb failed:\n\(ChildProcesses.tail(of: log, lines: 5))")
            }
            let port = try FreePorts.take(1)[0]
            let server =
                prefix + [
                    binaries.directory + "/postgres", "-D", data, "-p", "\(port)", "-k", directory.path, "-c",
                    "listen_addresses=127.0.0.1", "-c", "fsync=on", "-c", "synchronous_commit=on", "-c",
                    "max_connections=\(maxConnections)", "-c", "shared_buffers=128MB",
                ] + statementStatistics(binaries.directory)
            // SIGINT is PostgreSQL's fast shutdown.
            let pid = try children.spawn(
                name: "postgres", executable: server[0], arguments: Array(server.dropFirst()), logPath: log,
                stopSignal: SIGINT)
            let deadline = BenchClock.nanoseconds() + 30_000_000_000
            while PQping(connectionString(port: port)) != PQPING_OK {
                guard children.isRunning(pid), BenchClock.nanoseconds() < deadline else {
                    children.stop(pid)
                    throw BenchError("postgres did not start:\n\(ChildProcesses.tail(of: log, lines: 5))")
                }
                BenchClock.sleep(milliseconds: 50)
            }
            let connection = try PostgresConnection(connectionString(port: port))
            try connection.execute(
                "CREATE TABLE events (position bigserial PRIMARY KEY, stream text NOT NULL, version integer NOT NULL, "
                    + "data text NOT NULL, UNIQUE (stream, version))")
            let version = (try? connection.scalar("SHOW server_version")) ?? binaries.version
            return PostgresServer(port: port, pid: pid, version: version, directory: directory)
        } catch {
            directory.cleanUp()
            throw error
        }
    }

    /// The settings that load `pg_stat_statements` and have it count the statements inside
    /// functions too, when the server has it (a contrib module); none otherwise.
    private static func statementStatistics(_ binaries: String) -> [String] {
        let library = URL(fileURLWithPath: binaries).deletingLastPathComponent().path + "/lib/pg_stat_statements.so"
        guard access(library, R_OK) == 0 else { return [] }
        return ["-c", "shared_preload_libraries=pg_stat_statements", "-c", "pg_stat_statements.track=all"]
    }

    func stop(children: ChildProcesses) {
        children.stop(pid)
        directory.cleanUp()
    }
}
