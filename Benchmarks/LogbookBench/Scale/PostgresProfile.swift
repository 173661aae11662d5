import Foundation

/// Where PostgreSQL spent a scale step, read from the server itself: the statements that
/// took the most time (`pg_stat_statements`, nested statements of the append function
/// included, when the server loaded it) and the processor time of its processes by kind
/// (`pg_stat_activity.backend_type`: client backends, autovacuum, WAL writer …).
struct PostgresProfile: Sendable {
    /// One normalised statement: how often it ran and the wall time it took, lock waits
    /// included, so the sum over nested statements exceeds the processor time.
    struct Statement: Sendable {
        var query: String
        var calls: Int
        var milliseconds: Double
        var rows: Int
        /// Shared buffers the statement read (found in memory or not): a scan shows here.
        var blocks: Int
    }

    var statements: [Statement] = []
    /// Processor seconds by kind of process; "ended" is what processes that ended during
    /// the step used (autovacuum workers, mostly), counted by the postmaster when it reaped them.
    var processorSeconds: [String: Double] = [:]

    /// Makes the database's statement statistics available and empties them. False when the
    /// server did not load `pg_stat_statements` (it is not installed).
    static func reset(_ connection: PostgresConnection) throws(BenchError) -> Bool {
        let loaded = try connection.scalar("SHOW shared_preload_libraries")
        guard
            loaded.split(separator: ",").contains(where: {
                $0.trimmingCharacters(in: .whitespaces) == "pg_stat_statements"
            })
        else { return false }
        try connection.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        try connection.execute("SELECT pg_stat_statements_reset()")
        return true
    }

    /// The `limit` statements of this database that took the most time since `reset`.
    static func statements(_ connection: PostgresConnection, limit: Int) throws(BenchError) -> [Statement] {
        try connection.rows(
            """
            SELECT regexp_replace(query, '\\s+', ' ', 'g'), calls, total_exec_time, rows,
                   shared_blks_hit + shared_blks_read FROM pg_stat_statements
            WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
            ORDER BY total_exec_time DESC LIMIT \(limit)
            """
        ).map { row in
            Statement(
                query: String(row[0].prefix(160)), calls: Int(row[1]) ?? 0, milliseconds: Double(row[2]) ?? 0,
                rows: Int(row[3]) ?? 0, blocks: Int(row[4]) ?? 0)
        }
    }

    /// The live processes of the server by kind, from `pg_stat_activity`.
    static func processKinds(_ connection: PostgresConnection) throws(BenchError) -> [Int32: String] {
        var kinds: [Int32: String] = [:]
        for row in try connection.rows("SELECT pid, backend_type FROM pg_stat_activity") {
            if let pid = Int32(row[0]) { kinds[pid] = row[1] }
        }
        return kinds
    }

    /// Processor seconds used between two readings of `ProcessTreeCPU.byProcess(of: server)`,
    /// by kind of process.
    static func processorSeconds(
        server: Int32, from before: [Int32: Double], to after: [Int32: Double], kinds: [Int32: String]
    ) -> [String: Double] {
        let serverAndEnded = "postmaster and ended processes"
        var used: [String: Double] = [:]
        for (pid, seconds) in before where after[pid] == nil {
            used[serverAndEnded, default: 0] -= seconds
        }
        for (pid, seconds) in after {
            let kind = pid == server ? serverAndEnded : kinds[pid] ?? "unnamed"
            used[kind, default: 0] += seconds - (before[pid] ?? 0)
        }
        return used
    }
}
