public import LogbookApplication

/// A test store that wraps another and forwards every read to it, so that a test double
/// only writes the behaviour it changes (usually `append`).
public protocol ForwardingEventStore: EventStore {
    var inner: any EventStore { get }
}

extension ForwardingEventStore {
    public func readStream(_ stream: String, fromVersion: Int, limit: Int) throws(EventStoreError) -> [RecordedEvent] {
        try inner.readStream(stream, fromVersion: fromVersion, limit: limit)
    }

    public func read(fromPosition: Int64, limit: Int, categories: Set<String>?) throws(EventStoreError)
        -> [RecordedEvent]
    {
        try inner.read(fromPosition: fromPosition, limit: limit, categories: categories)
    }

    public func visitEvents(
        fromPosition: Int64, limit: Int, categories: Set<String>?, _ body: (StoredEventBytes) -> Bool
    ) throws(EventStoreError) {
        try inner.visitEvents(fromPosition: fromPosition, limit: limit, categories: categories, body)
    }

    public func headPosition() throws(EventStoreError) -> Int64 { try inner.headPosition() }

    public func commandRecord(_ commandId: String) throws(EventStoreError) -> CommandRecord? {
        try inner.commandRecord(commandId)
    }
}
