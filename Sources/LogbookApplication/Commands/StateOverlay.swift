import LogbookDomain

/// The stream states a round of decisions has produced but not yet committed, and which
/// commands of the round produced them.
struct StateOverlay {
    private(set) var entries: [StreamId: StreamStateCache.Entry] = [:]
    private var writersByStream: [StreamId: Set<String>] = [:]

    /// Records the state a decision read, unless a staged one is already newer.
    mutating func stage(_ stream: StreamId, _ entry: StreamStateCache.Entry) {
        if entries[stream] == nil { entries[stream] = entry }
    }

    /// Advances a stream by one event decided by `commandId`.
    mutating func apply(_ event: DomainEvent, by commandId: String) {
        let stream = event.stream
        var entry = entries[stream] ?? StreamStateCache.Entry(version: 0, state: .initial(for: stream))
        entry.state = entry.state.evolved(by: event)
        entry.version += 1
        entries[stream] = entry
        writersByStream[stream, default: []].insert(commandId)
    }

    /// The commands of the round whose staged events a reader of `streams` sees.
    func writers(of streams: some Sequence<StreamId>) -> Set<String> {
        streams.reduce(into: Set<String>()) { $0.formUnion(writersByStream[$1] ?? []) }
    }
}
