import LogbookApplication

/// An event store whose reads, when they fail as `unavailable`, are tried once more at
/// once. A PostgreSQL connection the server dropped while idle (a restart,
/// `pg_terminate_backend`) fails its next call and reconnects on the one after; a read can
/// always be repeated, so a `ReadLog` client or a feed process does not see that first
/// failure. Appends pass through untouched: their outcome after a dropped connection is
/// unknown, and the client, not the store, retries them with the same command ids.
struct RetriedReads: EventStore {
    let inner: any EventStore

    init(_ inner: any EventStore) {
        self.inner = inner
    }

    func append(_ batch: [AppendRequest]) throws(EventStoreError) -> [AppendResult] {
        try inner.append(batch)
    }

    func readStream(_ stream: String, fromVersion: Int, limit: Int) throws(EventStoreError) -> [RecordedEvent] {
        try twice { () throws(EventStoreError) in try inner.readStream(stream, fromVersion: fromVersion, limit: limit) }
    }

    func read(fromPosition: Int64, limit: Int, categories: Set<String>?) throws(EventStoreError) -> [RecordedEvent] {
        try twice { () throws(EventStoreError) in
            try inner.read(fromPosition: fromPosition, limit: limit, categories: categories)
        }
    }

    /// Tried again only when it failed before handing out any event: what `body` has seen
    /// cannot be taken back.
    func visitEvents(
        fromPosition: Int64, limit: Int, categories: Set<String>?, _ body: (StoredEventBytes) -> Bool
    ) throws(EventStoreError) {
        var visited = false
        do {
            try inner.visitEvents(fromPosition: fromPosition, limit: limit, categories: categories) { event in
                visited = true
                return body(event)
            }
        } catch {
            guard case .unavailable = error, !visited else { throw error }
            try inner.visitEvents(fromPosition: fromPosition, limit: limit, categories: categories, body)
        }
    }

    func headPosition() throws(EventStoreError) -> Int64 {
        try twice { () throws(EventStoreError) in try inner.headPosition() }
    }

    func commandRecord(_ commandId: String) throws(EventStoreError) -> CommandRecord? {
        try twice { () throws(EventStoreError) in try inner.commandRecord(commandId) }
    }

    private func twice<T>(_ read: () throws(EventStoreError) -> T) throws(EventStoreError) -> T {
        do {
            return try read()
        } catch {
            guard case .unavailable = error else { throw error }
            return try read()
        }
    }
}
