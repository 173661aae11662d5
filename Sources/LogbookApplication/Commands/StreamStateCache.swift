public import LogbookDomain

/// The folded state and version of recently used streams, so that a busy product is not
/// re-read from the start of its stream for every purchase. Bounded: past `capacity`
/// entries the least recently used quarter is dropped. Not thread-safe: it belongs to
/// the one thread that runs a `CommandHandler`.
public struct StreamStateCache {
    public struct Entry: Sendable, Equatable {
        public var version: Int
        public var state: AggregateState

        public init(version: Int, state: AggregateState) {
            self.version = version
            self.state = state
        }
    }

    public let capacity: Int
    private var entries: [StreamId: (entry: Entry, lastUsed: UInt64)] = [:]
    private var clock: UInt64 = 0

    public init(capacity: Int = 50_000) {
        precondition(capacity > 0, "a cache needs room for at least one stream")
        self.capacity = capacity
    }

    public var count: Int { entries.count }

    public mutating func entry(for stream: StreamId) -> Entry? {
        guard let found = entries[stream] else { return nil }
        clock += 1
        entries[stream]?.lastUsed = clock
        return found.entry
    }

    public mutating func store(_ entry: Entry, for stream: StreamId) {
        clock += 1
        entries[stream] = (entry, clock)
        if entries.count > capacity { evictLeastRecentlyUsed() }
    }

    public mutating func remove(_ stream: StreamId) {
        entries[stream] = nil
    }

    public mutating func removeAll() {
        entries.removeAll(keepingCapacity: true)
    }

    private mutating func evictLeastRecentlyUsed() {
        let keep = capacity - capacity / 4
        let cutoff = entries.values.map(\.lastUsed).sorted(by: >)[min(keep, entries.count) - 1]
        entries = entries.filter { $0.value.lastUsed >= cutoff }
    }
}
