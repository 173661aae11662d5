/// How long a read-model file's WAL may grow before the commit that passes that length
/// copies it back into the file (SQLite's automatic checkpoint, which with
/// `synchronous=NORMAL` syncs the WAL and then the file).
///
/// A checkpoint is a burst of writes and a device flush on the disk the worker syncs its
/// log on, and every commit the worker syncs meanwhile waits behind it. With 10,000 pages
/// (40 MB) between checkpoints the live query process set the worker's p99 at half the
/// peak to 20–30 ms; with 1,000 pages, 7–13 ms (BENCHMARKS.md, stop 25). So a live store
/// checkpoints every 1,000 pages. A catch-up's large transactions (thousands of pages
/// each) would then sync after every transaction, which cost it 20–30 % of its speed; a
/// batch of `catchUpEvents` or more lets the WAL reach 10,000 pages before the commit
/// that ends it copies it back.
enum SQLiteReadModelCheckpoints {
    static let livePages: Int32 = 1_000
    static let catchUpPages: Int32 = 10_000
    /// A batch this large is a catch-up's (a live feed batch is a fraction of it).
    static let catchUpEvents = 5_000

    /// The WAL length at which the commit of a batch of `events` events checkpoints.
    static func pages(forBatchOf events: Int) -> Int32 {
        events >= catchUpEvents ? catchUpPages : livePages
    }
}
