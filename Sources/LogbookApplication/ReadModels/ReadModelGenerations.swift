/// Where a query process keeps its read-model stores: numbered generations, of which the
/// newest complete one is current. A rebuild fills a new generation while the current one
/// keeps answering, marks it complete, and the process switches to it; a crash halfway
/// leaves an incomplete generation that the next `openCurrent()` throws away.
public protocol ReadModelGenerations: Sendable {
    /// The current generation for writing: the newest complete one, or a new empty
    /// generation 1 when there is none. Removes incomplete and older generations.
    func openCurrent() throws(ReadModelStoreError) -> (generation: Int, store: any ReadModelStore)

    /// A reader of a generation, for a thread other than the writer's.
    func openReader(generation: Int) throws(ReadModelStoreError) -> any ReadModelReader

    /// A new empty generation, numbered after every existing one, not complete.
    func createNext() throws(ReadModelStoreError) -> (generation: Int, store: any ReadModelStore)

    /// Deletes the generations older than `generation` (never a newer one: a rebuild may
    /// be filling it).
    func removeOlder(than generation: Int)
}
