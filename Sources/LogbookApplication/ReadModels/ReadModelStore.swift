/// The write side of the read models: where projections keep their rows and checkpoint.
/// Implementations promise:
///
/// - `apply` runs the `Projector` over its events and sets the checkpoint to `through`
///   in one transaction: after a crash the rows and the checkpoint agree, so no event is
///   applied twice or skipped;
/// - an event at or below the checkpoint, positions that do not strictly increase, an
///   event beyond `through`, `through` below the checkpoint, or an event that cannot be
///   decoded is refused with a `ReadModelStoreError` and nothing is written;
/// - `isComplete` stays false from creation until `markComplete()`, for whoever builds a
///   store from the start of the log (a rebuild) and switches to it only once it has
///   reached the log's head.
///
/// One thread at a time writes a store (the projection's, or a rebuild's that hands it
/// over); calls are serialised inside and may block on I/O, so make them from a thread
/// you own, not from Swift concurrency's pool. Pass batches of thousands of events when
/// catching up: each `apply` is one transaction.
public protocol ReadModelStore: AnyObject, Sendable {
    /// The position of the last event applied (or skipped) through, 0 when nothing was applied.
    func checkpoint() throws(ReadModelStoreError) -> Int64

    /// Applies `events` (strictly increasing positions, all above the checkpoint and at
    /// most `through`) and moves the checkpoint to `through`, in one transaction.
    /// `through` may lie beyond the last event (positions of other categories, or the
    /// head a catch-up learned) and `events` may be empty. Whatever form the batch holds
    /// its events in, the rows, checkpoint and refusals are those of the events decoded.
    func apply(_ events: some EventBatch, through position: Int64) throws(ReadModelStoreError)

    /// Whether the store was marked complete. A new store is not.
    var isComplete: Bool { get throws(ReadModelStoreError) }

    /// Marks the store complete, durably (it stays complete when reopened).
    func markComplete() throws(ReadModelStoreError)

    /// Starts a bulk load: for a store being filled from the start of the log that no one
    /// reads yet (a rebuild, before `markComplete()`). Until `endBulkLoad()`, `apply` may
    /// keep rows in memory and write them later, fewer and in larger transactions, each
    /// together with the checkpoint it covers; `checkpoint()` reports what was applied,
    /// written or not. Refused for a complete store. A store may ignore it.
    func beginBulkLoad() throws(ReadModelStoreError)

    /// Writes whatever the bulk load still holds, durably, and returns to applying each
    /// batch in its own transaction. Call it before `markComplete()`.
    func endBulkLoad() throws(ReadModelStoreError)
}

extension ReadModelStore {
    /// Stores that write every batch at once have nothing to prepare.
    public func beginBulkLoad() throws(ReadModelStoreError) {}

    public func endBulkLoad() throws(ReadModelStoreError) {}
}
