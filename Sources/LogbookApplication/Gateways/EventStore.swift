/// The append-only log every event lives in. Implementations promise:
///
/// - each `AppendRequest` is atomic across all its streams: all its events or none;
/// - every expectation is checked inside the same transaction as the write;
/// - positions run 1, 2, 3 … without holes, in commit order; versions per stream likewise;
/// - a command id is recorded with its events (or, for a command that appended nothing,
///   with the answer it was given), so a request whose id was already recorded appends
///   nothing and returns the first record (`.duplicate`);
/// - `append` of a batch is one durable transaction (group commit) in which each
///   request succeeds or fails on its own, in order, except that a request whose
///   `dependencies` did not all commit in this batch fails too (`.abandoned`); it returns
///   only once that transaction is durable, and throws (committing nothing) if it cannot be
///   (a store opened to defer its syncs returns once committed instead, and its
///   `LogFlusher` makes the commit durable: only for a caller that flushes before it
///   reports anything, as the worker's commit stage does);
/// - committed events and command records are never changed or removed.
///
/// Calls block on I/O: make them from a thread you own, not from Swift concurrency's pool.
public protocol EventStore: Sendable {
    /// Appends a batch in one transaction; results come back in request order.
    func append(_ batch: [AppendRequest]) throws(EventStoreError) -> [AppendResult]

    /// Whether `send` returns before its append is done, so that the caller can work while
    /// the store commits (PostgreSQL: the batch is on its way to the server). False by default.
    var sendsAhead: Bool { get }

    /// Starts `append(batch)` and returns it in flight; its results come from
    /// `AppendInFlight.results()`, which must be taken before the next `send` or `append`.
    /// The default appends at once and hands back what it returned.
    func send(_ batch: [AppendRequest]) throws(EventStoreError) -> AppendInFlight

    /// Events of one stream with `version >= fromVersion`, in version order, at most `limit`.
    func readStream(_ stream: String, fromVersion: Int, limit: Int) throws(EventStoreError) -> [RecordedEvent]

    /// Events with `position >= fromPosition`, in position order, at most `limit`;
    /// only those of `categories` when it is given.
    func read(fromPosition: Int64, limit: Int, categories: Set<String>?) throws(EventStoreError) -> [RecordedEvent]

    /// The events `read(fromPosition:limit:categories:)` returns, handed to `body` one at a
    /// time in position order as borrowed bytes (valid only during that call), so a reader
    /// that writes them out builds no `RecordedEvent` and no `String`s. `body` answers false
    /// to stop early. A throw may come after `body` has seen some events. The default reads
    /// the page with `read` and lends each event's strings; SQLite reads its rows' columns.
    func visitEvents(
        fromPosition: Int64, limit: Int, categories: Set<String>?, _ body: (StoredEventBytes) -> Bool
    ) throws(EventStoreError)

    /// The position of the last committed event, 0 for an empty log.
    func headPosition() throws(EventStoreError) -> Int64

    /// What a command id was recorded with, or nil when it never was.
    func commandRecord(_ commandId: String) throws(EventStoreError) -> CommandRecord?

    /// Every event of each of `streams`, in version order, by stream name (a stream with no
    /// events maps to `[]`). A store that can reads them together (SQLite: in one read
    /// transaction), which costs much less than one `readWholeStream` each; the default does that.
    func readWholeStreams(_ streams: [String]) throws(EventStoreError) -> [String: [RecordedEvent]]
}

extension EventStore {
    public var sendsAhead: Bool { false }

    public func send(_ batch: [AppendRequest]) throws(EventStoreError) -> AppendInFlight {
        .appended { () throws(EventStoreError) in try append(batch) }
    }
}

extension EventStore {
    public func readWholeStreams(_ streams: [String]) throws(EventStoreError) -> [String: [RecordedEvent]] {
        var found: [String: [RecordedEvent]] = [:]
        for stream in streams { found[stream] = try readWholeStream(stream) }
        return found
    }
}

extension EventStore {
    public func visitEvents(
        fromPosition: Int64, limit: Int, categories: Set<String>?, _ body: (StoredEventBytes) -> Bool
    ) throws(EventStoreError) {
        for event in try read(fromPosition: fromPosition, limit: limit, categories: categories) {
            guard StoredEventBytes.withBytes(of: event, body) else { return }
        }
    }

    /// Every event `visitEvents` hands out, copied: `read` for a store whose own
    /// `visitEvents` reads its rows (one that keeps the default must not use it).
    public func visitedEvents(fromPosition: Int64, limit: Int, categories: Set<String>?) throws(EventStoreError)
        -> [RecordedEvent]
    {
        var events: [RecordedEvent] = []
        try visitEvents(fromPosition: fromPosition, limit: limit, categories: categories) { event in
            events.append(event.recordedEvent)
            return true
        }
        return events
    }
}

extension EventStore {
    /// Every event of one stream from `fromVersion` on, read in pages.
    public func readWholeStream(_ stream: String, fromVersion: Int = 1, pageSize: Int = 1000)
        throws(EventStoreError) -> [RecordedEvent]
    {
        var events: [RecordedEvent] = []
        var next = fromVersion
        while true {
            let page = try readStream(stream, fromVersion: next, limit: pageSize)
            events += page
            guard page.count == pageSize, let last = page.last else { return events }
            next = last.version + 1
        }
    }
}

extension EventStore {
    /// Reads the log from `fromPosition` to its current end in pages of `pageSize`, handing
    /// each page to `body` in position order (so a reader of a huge log holds one page).
    public func forEachPage<Failure: Error>(
        fromPosition: Int64 = 1, categories: Set<String>? = nil, pageSize: Int = 1_000,
        _ body: ([RecordedEvent]) throws(Failure) -> Bool
    ) throws(PagedReadError<Failure>) {
        var next = fromPosition
        while true {
            let page: [RecordedEvent]
            do {
                page = try read(fromPosition: next, limit: pageSize, categories: categories)
            } catch {
                throw .store(error)
            }
            guard let last = page.last else { return }
            do {
                guard try body(page) else { return }
            } catch {
                throw .body(error)
            }
            guard last.position < Int64.max else { return }
            next = last.position + 1
        }
    }
}

/// Why a paged read stopped: the store failed, or the caller's body threw.
public enum PagedReadError<Failure: Error>: Error {
    case store(EventStoreError)
    case body(Failure)
}
