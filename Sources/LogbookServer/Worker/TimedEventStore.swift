import LogbookApplication

/// An event store that times each `append` or `send` (one group commit) into the worker's commit
/// histogram and otherwise is the store it wraps.
struct TimedEventStore: EventStore {
    let store: any EventStore
    let metrics: WorkerMetrics

    func append(_ batch: [AppendRequest]) throws(EventStoreError) -> [AppendResult] {
        try send(batch).results()
    }

    var sendsAhead: Bool { store.sendsAhead }

    /// Timed from the sending until the answer is taken: a stage sending ahead takes it
    /// after the chunk of commands it was deciding when the answer came.
    func send(_ batch: [AppendRequest]) throws(EventStoreError) -> AppendInFlight {
        let started = ContinuousClock.now
        return try store.send(batch).then { [metrics] answer throws(EventStoreError) in
            defer { metrics.observeCommit(seconds: (ContinuousClock.now - started).seconds) }
            return try answer()
        }
    }

    func readStream(_ stream: String, fromVersion: Int, limit: Int) throws(EventStoreError) -> [RecordedEvent] {
        try store.readStream(stream, fromVersion: fromVersion, limit: limit)
    }

    func read(fromPosition: Int64, limit: Int, categories: Set<String>?) throws(EventStoreError) -> [RecordedEvent] {
        try store.read(fromPosition: fromPosition, limit: limit, categories: categories)
    }

    func visitEvents(
        fromPosition: Int64, limit: Int, categories: Set<String>?, _ body: (StoredEventBytes) -> Bool
    ) throws(EventStoreError) {
        try store.visitEvents(fromPosition: fromPosition, limit: limit, categories: categories, body)
    }

    func headPosition() throws(EventStoreError) -> Int64 { try store.headPosition() }

    func commandRecord(_ commandId: String) throws(EventStoreError) -> CommandRecord? {
        try store.commandRecord(commandId)
    }

    func readWholeStreams(_ streams: [String]) throws(EventStoreError) -> [String: [RecordedEvent]] {
        try store.readWholeStreams(streams)
    }
}

extension Duration {
    /// The duration in seconds, as a double.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
