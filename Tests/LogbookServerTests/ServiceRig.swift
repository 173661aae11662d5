import Foundation
import LogbookApplication
import LogbookMemory
import LogbookSQLite
import LogbookServer
import LogbookTestSupport
import LogbookZMQ

/// A worker (over an in-memory log) and a query process (SQLite read-model generations)
/// running in the test process, on ipc:// sockets in a temporary folder that holds the read
/// models too. `stop()` stops both and removes the folder; call it with `defer`, which also
/// keeps the rig alive while the test's clients talk to it.
final class ServiceRig: Sendable {
    let directory: URL
    let endpoints: ServiceEndpoints
    let generations: SQLiteReadModelGenerations
    /// The context of the test's own sockets.
    let context: ZMQContext
    private let worker: WorkerService
    private let query: QueryService
    private let stopping = Once()

    /// `releaseFreeMemory` is what the query process calls when a rebuild starts.
    init(releaseFreeMemory: @escaping @Sendable () -> Void = {}) throws {
        let directory = try SocketFolder.make("logbook-server")
        let endpoints = ServiceEndpoints.ipc(in: directory)
        let generations = SQLiteReadModelGenerations(directory: directory.path)
        let diagnostics = Diagnostics(process: "test", threshold: .error, clock: StepClock())
        // The worker seals personal data as the service does, with a key store in memory.
        let vault = PersonalDataVault.forTests()
        let store = ProtectedEventStore(InMemoryEventStore(), vault: vault)
        do {
            worker = try WorkerService(
                endpoints: endpoints, openStore: { () throws(EventStoreError) -> any EventStore in store },
                buckets: vault.buckets, clock: StepClock(), ids: CountingIds(), diagnostics: diagnostics)
            query = try QueryService(
                endpoints: endpoints, generations: generations, clock: StepClock(), diagnostics: diagnostics,
                releaseFreeMemory: releaseFreeMemory)
            context = try ZMQContext()
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        self.directory = directory
        self.endpoints = endpoints
        self.generations = generations
        do {
            try worker.start()
            try query.start()
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    /// Stops both processes (once) and removes the folder.
    func stop() {
        guard stopping.first() else { return }
        query.stop()
        worker.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// A DEALER connected to the worker's commands socket.
    func commandsClient() throws -> DealerClient { try DealerClient(context, endpoints.commands) }

    /// A DEALER connected to the query process's queries socket.
    func queriesClient() throws -> DealerClient { try DealerClient(context, endpoints.queries) }
}
