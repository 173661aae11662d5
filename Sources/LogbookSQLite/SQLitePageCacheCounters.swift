/// What one connection's page cache did since it opened (SQLite's `sqlite3_db_status`
/// counters). `spills` counts dirty pages written to the WAL before their transaction
/// committed because the cache was full: each one is a `pwrite` the commit may repeat, and
/// the clean pages evicted to make room are read again (`misses`). SQLite 3.40 keeps them
/// in 32-bit ints, so they wrap at 2³² in a long-lived busy connection: `since` subtracts
/// modulo 2³², right for readings less than one wrap apart.
public struct SQLitePageCacheCounters: Sendable, Equatable {
    /// Page lookups the cache answered.
    public let hits: UInt32
    /// Page lookups that read the page from the file or the WAL.
    public let misses: UInt32
    /// Dirty pages written in the middle of a transaction to make room.
    public let spills: UInt32

    /// What the cache did between `earlier` and this reading.
    public func since(_ earlier: SQLitePageCacheCounters) -> SQLitePageCacheCounters {
        SQLitePageCacheCounters(
            hits: hits &- earlier.hits, misses: misses &- earlier.misses, spills: spills &- earlier.spills)
    }
}
