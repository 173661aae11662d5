/// How long a read-model file's WAL may grow before the commit that passes that length
/// copies it back into the file (SQLite's automatic checkpoint, which with
/// `synchronous=NORMAL` syncs the WAL and then the file).
///
/// A checkpoint is a burst of writes and a device flush on the disk the worker syncs its
/// log on, and every commit the worker syncs meanwhile waits behind it: long spans between
/// checkpoints made long bursts, which showed as the worker's latency tail. So a live store
/// checkpoints in short spans (`livePages`). A catch-up's large transactions (thousands of
/// pages each) would then sync after every transaction, which slows it markedly; a batch of
/// `catchUpEvents` or more lets the WAL reach `catchUpPages` before the commit that ends it
/// copies it back.
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
