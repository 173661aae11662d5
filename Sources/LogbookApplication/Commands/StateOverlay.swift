import LogbookDomain

/// The stream states a round of decisions has produced but not yet committed, and which
/// commands of the round produced them.
struct StateOverlay {
    private(set) var entries: [StreamId: StreamStateCache.Entry] = [:]
    /// The streams of `entries` in the order they were first staged or written: the order the
    /// handler caches them in. A dictionary's own order differs from one instance to the next,
    /// and the cache's recency order decides what it drops, so two handlers fed the same
    /// batches would otherwise cache different streams.
    private(set) var order: [StreamId] = []
    /// A stream has one writer, seldom a few: a list, not a set per stream.
    private var writersByStream: [StreamId: [String]] = [:]

    /// An empty overlay with room for about `expectedStreams` streams, so that a round's
    /// decisions do not grow (and rehash) its tables step by step.
    init(expectedStreams: Int = 0) {
        entries.reserveCapacity(expectedStreams)
        writersByStream.reserveCapacity(expectedStreams)
    }

    /// Records the state a decision read, unless a staged one is already newer.
    mutating func stage(_ stream: StreamId, _ entry: StreamStateCache.Entry) {
        if entries[stream] == nil {
            entries[stream] = entry
            order.append(stream)
        }
    }

    /// Advances a stream by one event decided by `commandId`.
    mutating func apply(_ event: DomainEvent, by commandId: String) {
        let stream = event.stream
        if entries[stream] == nil { order.append(stream) }
        // Changed in place: one lookup, and the state is not copied.
        entries[stream, default: StreamStateCache.Entry(version: 0, state: .initial(for: stream))].advance(by: event)
        Self.add(commandId, to: &writersByStream[stream, default: []])
    }

    private static func add(_ commandId: String, to writers: inout [String]) {
        if !writers.contains(commandId) { writers.append(commandId) }
    }

    /// Leaves `streams` out: the round's decisions on them are not to be trusted.
    mutating func forget(_ streams: Set<StreamId>) {
        guard !streams.isEmpty else { return }
        for stream in streams {
            entries.removeValue(forKey: stream)
            writersByStream.removeValue(forKey: stream)
        }
        order.removeAll { streams.contains($0) }
    }

    /// The commands of the round whose staged events a reader of `streams` sees.
    func writers(of streams: some Sequence<StreamId>) -> Set<String> {
        streams.reduce(into: Set<String>()) { $0.formUnion(writersByStream[$1] ?? []) }
    }
}

extension StreamStateCache.Entry {
    /// Folds one more event of the stream.
    fileprivate mutating func advance(by event: DomainEvent) {
        state = state.evolved(by: event)
        version += 1
    }
}
