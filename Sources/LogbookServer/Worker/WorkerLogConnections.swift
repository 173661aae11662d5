public import LogbookApplication
public import LogbookDomain

/// How a worker opens its connections to the event log: one writer, for its commit stage,
/// with the flusher that makes its commits durable when they return before their sync
/// (SQLite with deferred syncs); and readers, one per thread that reads (`Status`' head,
/// `ReadLog`), which must then see only what is durable.
public struct WorkerLogConnections: Sendable {
    /// The writer's connection; its flusher when its appends return before they are durable;
    /// and its write turns, when its write lock can be taken without waiting (then the command
    /// loop may run a small batch itself, `CommitStage.runInline`).
    public typealias Writer = (store: any EventStore, flusher: (any LogFlusher)?, turns: (any WriteTurns)?)

    public let openWriter: @Sendable () throws(EventStoreError) -> Writer
    public let openReader: WorkerService.StoreOpener
    /// How the log spreads email addresses over the streams of their claims (the vault's,
    /// whose key seals the personal data of the stores these open).
    public let buckets: EmailBucketing

    public init(
        openWriter: @escaping @Sendable () throws(EventStoreError) -> Writer,
        openReader: @escaping WorkerService.StoreOpener, buckets: EmailBucketing
    ) {
        self.openWriter = openWriter
        self.openReader = openReader
        self.buckets = buckets
    }

    /// Every connection from `open`, each append durable when it returns (`synchronous=FULL`,
    /// PostgreSQL, memory).
    public static func syncingEachCommit(_ open: @escaping WorkerService.StoreOpener, buckets: EmailBucketing)
        -> WorkerLogConnections
    {
        WorkerLogConnections(
            openWriter: { () throws(EventStoreError) -> Writer in (try open(), nil, nil) }, openReader: open,
            buckets: buckets)
    }
}
