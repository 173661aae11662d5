import LogbookJSON

extension BenchSession {
    /// Section 6: what users would pick instead, driven from this harness at the same
    /// concurrency and window: Redis streams (`XADD`, `appendfsync always`) and PostgreSQL
    /// (one committed single-row `INSERT` per command). Each row is Logbook's throughput at
    /// that client count with the other system as its baseline; a system that is not
    /// installed is skipped with a note. Runs after the service has stopped.
    mutating func measureCompare() throws(BenchError) {
        let payload = facts.envelopeBytes ?? 400
        var redis: [Int: Double] = [:]
        var postgres: [Int: Double] = [:]
        var notes: [String] = []
        var details: JSONObject = ["payloadBytes": .int(payload)]

        if let executable = RedisServer.executable() {
            let directory = try run.scratch.subdirectory("redis")
            // A server that cannot start here is a note, not a failure of the bench.
            let server: RedisServer?
            do {
                server = try RedisServer.start(
                    executable: executable, directory: directory, logDirectory: logDirectory, children: children)
            } catch {
                server = nil
                notes.append("Redis skipped: \(error.message)")
            }
            if let server {
                details["redis"] = .string(server.version)
                defer { children.stop(server.pid) }
                for clients in options.clients {
                    progress("bench: Redis XADD (appendfsync always), \(clients) client\(clients == 1 ? "" : "s")")
                    let outcome = try RedisLoad.run(
                        port: server.port, clients: clients, threads: options.loadThreads, window: options.window,
                        seconds: options.secondsPerRun, payloadBytes: payload)
                    guard outcome.errors == 0 else { throw BenchError("Redis refused \(outcome.errors) XADDs") }
                    redis[clients] = outcome.perSecond
                }
            }
        } else {
            notes.append("Redis skipped: redis-server not installed")
        }

        if let binaries = PostgresServer.binaries() {
            progress("bench: starting PostgreSQL \(binaries.version)")
            let server: PostgresServer?
            do {
                server = try PostgresServer.start(
                    binaries: binaries, maxConnections: (options.clients.max() ?? 64) + 20, logDirectory: logDirectory,
                    children: children, register: { directory in run.otherDirectories.update { $0.append(directory) } })
            } catch {
                server = nil
                notes.append("PostgreSQL skipped: \(error.message)")
            }
            if let server {
                details["postgres"] = .string(server.version)
                defer { server.stop(children: children) }
                for clients in options.clients {
                    progress("bench: PostgreSQL INSERT + commit, \(clients) client\(clients == 1 ? "" : "s")")
                    let outcome = try PostgresLoad.run(
                        connectionString: server.connectionString, clients: clients, window: options.window,
                        seconds: options.secondsPerRun, payloadBytes: payload)
                    guard outcome.errors == 0 else {
                        throw BenchError("PostgreSQL refused \(outcome.errors) INSERTs")
                    }
                    postgres[clients] = outcome.perSecond
                }
            }
        } else {
            notes.append("PostgreSQL skipped: no server binaries in /usr/lib/postgresql/*/bin")
        }

        for clients in options.clients {
            var baselines: [BenchFigure.Baseline] = []
            if let rate = redis[clients] { baselines.append(.init("Redis 7 XADD, appendfsync always", rate)) }
            if let rate = postgres[clients] {
                baselines.append(.init("PostgreSQL INSERT, synchronous_commit on", rate))
            }
            let logbook = facts.throughput[clients]
            var figureNotes = notes
            if logbook == nil { figureNotes.append("Logbook's own figure needs the throughput section") }
            figures.append(
                BenchFigure(
                    section: "compare",
                    name:
                        "Logbook commands/s vs others, \(clients) client\(clients == 1 ? "" : "s") × \(options.window)",
                    value: logbook, unit: .perSecond, baselines: baselines,
                    target: clients == 64 ? redis[clients].map { .init(.atLeast, $0, "goal: ≥ Redis") } : nil,
                    note: figureNotes.isEmpty ? nil : figureNotes.joined(separator: "; "), details: details))
        }
    }
}
