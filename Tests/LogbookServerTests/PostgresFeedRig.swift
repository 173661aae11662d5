import Foundation
import LogbookApplication
import LogbookDomain
import LogbookPostgres
import LogbookSQLite
import LogbookServer
import LogbookTestSupport
import LogbookZMQ

/// Scale-out in the test process, on ipc:// sockets in a temporary folder: two workers on
/// one fresh PostgreSQL database (hinting, not publishing), one feed process publishing
/// that log, and optionally a query process following the feed. Both workers share one
/// id generator and a fixed clock, so the same commands sent one at a time give the same
/// events as one worker would. `stop()` stops everything and removes the folder.
final class PostgresFeedRig: Sendable {
    let database: PostgresTestDatabase
    let directory: URL
    /// The workers' commands endpoints.
    let commands: [String]
    /// The feed process's endpoints (`feed`, `log`; `queries` is the query process's).
    let endpoints: ServiceEndpoints
    let hints: String
    /// The context of the test's own sockets.
    let context: ZMQContext
    private let workers: [WorkerService]
    private let feedService: FeedService
    private let query: QueryService?
    private let stopping = Once()

    /// `hintFeed`: whether the workers send their hints where the feed takes them (false:
    /// every hint is lost). `pollMilliseconds`: the feed's poll without hints.
    init(hintFeed: Bool = true, pollMilliseconds: Int = 200, withQuery: Bool = false) throws {
        let database = try PostgresTestDatabase()
        let directory = try SocketFolder.make("logbook-pg-feed")
        let base = "ipc://\(directory.path)/"
        let endpoints = ServiceEndpoints(
            commands: base + "unused-commands", feed: base + "feed", queries: base + "queries", log: base + "log")
        let hints = base + "hints"
        let connectionString = database.connectionString
        let openStore: WorkerService.StoreOpener = { () throws(EventStoreError) -> any EventStore in
            try PostgresEventStore(connectionString: connectionString)
        }
        let diagnostics = Diagnostics(process: "test", threshold: .error, clock: StepClock())
        let clock = FixedClock()
        let ids = CountingIds()
        let commands = [base + "commands-1", base + "commands-2"]
        self.database = database
        self.directory = directory
        self.commands = commands
        self.endpoints = endpoints
        self.hints = hints
        do {
            workers = try commands.enumerated().map { index, endpoint in
                try WorkerService(
                    endpoints: ServiceEndpoints(
                        commands: endpoint, feed: base + "no-feed-\(index)", queries: endpoints.queries,
                        log: base + "worker-log-\(index)"),
                    openStore: openStore, buckets: .forTests, clock: clock, ids: ids, diagnostics: diagnostics,
                    afterCommit: .hintFeedProcesses(hintFeed ? [hints] : []))
            }
            feedService = try FeedService(
                endpoints: endpoints, hints: hints, openStore: openStore, diagnostics: diagnostics,
                pollMilliseconds: pollMilliseconds, clock: clock)
            query =
                withQuery
                ? try QueryService(
                    endpoints: endpoints, generations: SQLiteReadModelGenerations(directory: directory.path),
                    clock: StepClock(), diagnostics: diagnostics) : nil
            context = try ZMQContext()
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        do {
            try feedService.start()
            for worker in workers { try worker.start() }
            try query?.start()
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    /// Stops every service (once) and removes the folder.
    func stop() {
        guard stopping.first() else { return }
        query?.stop()
        for worker in workers { worker.stop() }
        feedService.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// A DEALER connected to worker `index`'s commands socket.
    func commandsClient(_ index: Int) throws -> DealerClient { try DealerClient(context, commands[index]) }

    /// A store of the test's own on the log.
    func store() throws -> PostgresEventStore { try PostgresEventStore(connectionString: database.connectionString) }
}

/// A SQLite worker publishing its own feed, the reference a feed process must match byte
/// for byte: a fixed clock and its own id generator, on ipc:// sockets in a temporary folder.
final class SQLiteWorkerRig: Sendable {
    let directory: URL
    let endpoints: ServiceEndpoints
    let context: ZMQContext
    private let worker: WorkerService

    init() throws {
        directory = try SocketFolder.make("logbook-sqlite-feed")
        endpoints = ServiceEndpoints.ipc(in: directory)
        let path = directory.appendingPathComponent("events.sqlite3").path
        worker = try WorkerService(
            endpoints: endpoints,
            openStore: { () throws(EventStoreError) -> any EventStore in try SQLiteEventStore(path: path) },
            buckets: .forTests,
            clock: FixedClock(), ids: CountingIds(),
            diagnostics: Diagnostics(process: "test", threshold: .error, clock: StepClock()))
        context = try ZMQContext()
        try worker.start()
    }

    deinit {
        worker.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A clock that always reads the same instant, whichever thread and however often it is
/// read: events decided by different workers get the same `recordedAt` as by one.
final class FixedClock: Clock, Sendable {
    func now() -> Timestamp { Timestamp(millisecondsSinceEpoch: 1_764_000_000_000) }
}
