import LogbookApplication

/// What opening a log does to its database before the first call: checks that it is a
/// Logbook log (or empty) without changing anything else's, then creates or migrates the
/// schema in one transaction under an advisory lock, re-checking under the lock, so that
/// several processes opening one new database at once create the schema once and agree.
enum PostgresPreparation {
    /// The advisory lock key every opener takes while creating or migrating ("LOGB").
    static let lockKey: Int64 = 0x4C4F_4742

    /// What the database holds.
    enum State: Equatable {
        case empty
        case current
        case older(Int)
    }

    /// Prepares the database behind `connection`; `target` names it in errors.
    static func prepare(_ connection: PostgresConnection, target: String) throws {
        let encoding = connection.parameterStatus("server_encoding") ?? "unknown"
        guard encoding == "UTF8" else {
            throw EventStoreError.notAnEventLog(path: target, reason: "its encoding is \(encoding); a log needs UTF8")
        }
        guard try state(connection, target: target) != .current else { return }
        try connection.execute("BEGIN")
        do {
            _ = try connection.query("SELECT pg_advisory_xact_lock($1::bigint)", [String(lockKey)])
            switch try state(connection, target: target) {
            case .current: break
            case .empty: try connection.execute(PostgresSchema.create)
            case .older(let version):
                for step in version..<PostgresSchema.version {
                    guard let migration = PostgresSchema.migrations[step] else {
                        throw EventStoreError.failed("\(target): no migration from schema version \(step)")
                    }
                    try connection.execute(migration)
                }
                _ = try connection.query(
                    "UPDATE logbook_schema SET version = $1::integer", [String(PostgresSchema.version)])
            }
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// Throws for another program's database, a newer schema, or a damaged marker.
    static func state(_ connection: PostgresConnection, target: String) throws -> State {
        let census = try connection.query(
            """
            SELECT count(*), to_regclass('logbook_schema') IS NOT NULL
            FROM pg_catalog.pg_class AS c JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
            WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
              AND n.nspname <> 'information_schema' AND n.nspname NOT LIKE 'pg\\_%'
            """)
        let relations = census.int64(0, 0)
        let marked = census.string(0, 1) == "t"
        if relations == 0 { return .empty }
        guard marked else {
            throw EventStoreError.notAnEventLog(
                path: target, reason: "it holds \(relations) tables or views of another program and no logbook_schema")
        }
        let marker = try connection.query("SELECT application, version FROM logbook_schema")
        guard marker.count == 1 else { throw EventStoreError.corrupt("\(target): logbook_schema has no row") }
        guard marker.string(0, 0) == PostgresSchema.application else {
            throw EventStoreError.notAnEventLog(
                path: target, reason: "its logbook_schema names another application (\(marker.string(0, 0)))")
        }
        let version = Int(marker.int64(0, 1))
        guard version <= PostgresSchema.version else {
            throw EventStoreError.unsupportedSchema(found: version, supported: PostgresSchema.version)
        }
        guard version >= 1 else { throw EventStoreError.corrupt("\(target): the log has no schema version") }
        return version == PostgresSchema.version ? .current : .older(version)
    }
}
