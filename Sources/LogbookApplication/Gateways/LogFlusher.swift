/// Makes an event store's commits durable after the fact, for a store opened to commit
/// without waiting for its sync (SQLite with deferred syncs, `SQLiteDurableHorizon`): its
/// `append` returns once the batch is committed, which its own connection sees at once,
/// and the batch is durable once a `flush` that began after that `append` returned has
/// returned. So one thread can append the next batch while another syncs the last ones.
///
/// Promises: a flush covers every append that returned before it began; readers that go
/// through the store's horizon see nothing a flush has not covered; once a flush has
/// thrown, every later one throws too (after a failed sync, what the disk holds is unknown,
/// and a second sync that succeeds proves nothing), so nothing committed after the last
/// successful flush is ever reported durable by this process.
public protocol LogFlusher: Sendable {
    /// Blocks until every append that returned before the call is durable, or throws
    /// (`EventStoreError.unavailable`) when that cannot be said.
    func flush() throws(EventStoreError)
}
