import CGlibcMalloc

/// How many malloc arenas a process may have, and handing freed memory back. glibc
/// otherwise gives each thread that allocates at once an arena of its own, and memory
/// freed in one is not reused by another.
/// Every process starts at `standard` (`main.swift`, before any thread starts);
/// `run worker` raises it before its serving threads start.
enum MallocArenas {
    /// Two: with one arena per thread, a query process's rebuild held memory freed on one
    /// thread that another could not reuse, raising its peak for no gain in speed.
    static let standard: Int32 = 2
    /// The worker's threads hand memory to one another on every command (the commit stage
    /// allocates the records and outcomes that the command loop frees; libzmq's I/O thread
    /// allocates the messages both read), and in two shared arenas they waited on each
    /// other's arena locks. Eight let them allocate without that wait, for a little more
    /// peak memory (four were no faster than eight and saved no memory).
    static let worker: Int32 = 8

    /// The limit for `logbook run ROLE`.
    static func limit(forRole role: String) -> Int32 { role == "worker" ? worker : standard }

    /// Sets the limit for `role`; arenas already made are kept.
    static func apply(forRole role: String) { apply(limit(forRole: role)) }

    /// Sets the limit to `arenas`; arenas already made are kept.
    static func apply(_ arenas: Int32) { _ = mallopt(M_ARENA_MAX, arenas) }

    /// Hands every whole free page of every arena back to the system (`malloc_trim(0)`):
    /// the query process calls it when a rebuild starts (`QueryService`'s
    /// `releaseFreeMemory`), so the rebuild's peak does not stack on what the start-up
    /// catch-up freed but glibc kept.
    @Sendable static func releaseFreeMemory() { _ = malloc_trim(0) }
}
