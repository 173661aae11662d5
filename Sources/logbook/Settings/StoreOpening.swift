import LogbookApplication
import LogbookCommandLine
import LogbookPostgres
import LogbookSQLite
import LogbookServer

/// How `run` opens the event log: once on the main thread first, so that a log that cannot
/// be used (a malformed connection string, an unreachable server, a failed login, another
/// program's database, a newer schema, a foreign file) stops the start with one line on
/// stderr and exit status 3 before any socket is bound or anything is written (a PostgreSQL
/// log that is unavailable is first waited for, as `--store-wait` says); then an opener that
/// each server thread calls for its own connection.
struct StoreOpening {
    /// A worker's connections: on SQLite a writer that commits with deferred syncs and
    /// readers that stop at what its flushes made durable (one `SQLiteDurableHorizon`).
    let worker: WorkerLogConnections
    /// Opens a connection that reads the log (one per thread that needs one).
    var open: WorkerService.StoreOpener { worker.openReader }
    /// The log for diagnostics: a file's path, or a database, host and port (never a password).
    let description: String

    /// The SQLite writer's page cache. A batch of a few hundred commands of new, random
    /// stream and command ids dirties more pages than SQLite's default cache holds: the
    /// writer would then write dirty pages to the WAL before the commit and read evicted
    /// ones back from the file. This size holds a large batch's pages; a larger one reads no
    /// fewer and costs memory. Readers keep the default.
    static let writerPageCacheKibibytes = 8 * 1024

    /// The vault every connection seals and opens personal data with (`ProtectedEventStore`).
    let vault: PersonalDataVault

    /// Opens `location` once (the data directory's file for SQLite, created with its folder
    /// if missing), then the vault beside it (`VaultOpening`; `vault` when given, as a feed
    /// process's replica shares its primary's), and keeps how to open them again. With
    /// `replicaOf` (the primary's connection string) a PostgreSQL `location` is a streaming
    /// replica whose reads wait for that primary's synchronous standbys.
    init(
        _ location: StorageSettings.Location, configuration: Configuration, diagnostics: Diagnostics,
        vault given: PersonalDataVault? = nil, replicaOf primary: String? = nil
    ) throws(CLIError) {
        switch location {
        case .sqlite:
            try configuration.ensureDataDirectory()
            let path = configuration.eventLogPath
            let horizon: SQLiteDurableHorizon
            do {
                horizon = try SQLiteDurableHorizon.opening(path: path, evolution: .standard)
            } catch {
                throw .unavailable(error.description)
            }
            let vault = try Self.vault(given, location, configuration: configuration, diagnostics: diagnostics)
            self.vault = vault
            // Durable up to the head read at the opening (its WAL synced); the writer syncs
            // the WAL again when it opens, and moves the horizon to its head. Its commits leave
            // checkpoints to a thread of their own.
            worker = WorkerLogConnections(
                openWriter: { () throws(EventStoreError) -> WorkerLogConnections.Writer in
                    let store = try SQLiteEventStore(
                        path: path, evolution: .standard, backgroundCheckpoints: true,
                        durability: .deferredSyncs(horizon), pageCacheKibibytes: Self.writerPageCacheKibibytes)
                    return (ProtectedEventStore(store, vault: vault), horizon, store)
                },
                openReader: { () throws(EventStoreError) -> any EventStore in
                    ProtectedEventStore(
                        try SQLiteEventStore(path: path, evolution: .standard, durability: .readsDurable(horizon)),
                        vault: vault)
                }, buckets: vault.buckets)
            description = path
        case .postgres(let connectionString):
            do {
                description = try configuration.storage.wait.retrying(
                    "event log", diagnostics: diagnostics, redacting: connectionString
                ) { () throws(EventStoreError) in
                    try PostgresEventStore(connectionString: connectionString, evolution: .standard, primary: primary)
                        .target
                }
            } catch {
                // A malformed string is refused before any connection: say so, not "invalid append request".
                let message = if case .invalidRequest(let problem) = error { problem } else { error.description }
                throw .unavailable(StorageSettings.redacting(connectionString, in: message))
            }
            let vault = try Self.vault(given, location, configuration: configuration, diagnostics: diagnostics)
            self.vault = vault
            // Each commit is durable when it returns (`synchronous_commit` on).
            worker = .syncingEachCommit(
                { () throws(EventStoreError) -> any EventStore in
                    ProtectedEventStore(
                        try PostgresEventStore(
                            connectionString: connectionString, evolution: .standard, primary: primary),
                        vault: vault)
                }, buckets: vault.buckets)
        }
    }
}

extension StoreOpening {
    /// `given`, else the vault beside `location`.
    private static func vault(
        _ given: PersonalDataVault?, _ location: StorageSettings.Location, configuration: Configuration,
        diagnostics: Diagnostics
    ) throws(CLIError) -> PersonalDataVault {
        if let given { return given }
        return try VaultOpening.open(location, configuration: configuration, diagnostics: diagnostics)
    }

    /// Finishes the forgetting of every user whose `UserForgotten` committed while its key
    /// was not yet destroyed (a process stopped in between), before anything is served.
    func finishForgetting(diagnostics: Diagnostics) throws(CLIError) {
        do {
            guard let store = try worker.openReader() as? ProtectedEventStore else { return }
            let finished = try store.finishUnfinishedForgetting()
            if !finished.isEmpty {
                diagnostics.info("finished forgetting users", ["count": String(finished.count)])
            }
        } catch {
            throw .unavailable(error.description)
        }
    }
}
