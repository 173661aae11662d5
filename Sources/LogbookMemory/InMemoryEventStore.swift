public import LogbookApplication
import Synchronization

/// An `EventStore` held in memory, with the same promises as the durable ones except
/// durability. For unit tests of the layers above the store, never for integration tests.
public final class InMemoryEventStore: EventStore {
    private struct Log {
        var events: [RecordedEvent] = []
        var streamPositions: [String: [Int]] = [:]  // indexes into `events`, by stream, in version order
        var commands: [String: ClosedRange<Int>] = [:]  // indexes into `events`, by command id
    }

    private let log = Mutex(Log())

    public init() {}

    public func append(_ batch: [AppendRequest]) throws(EventStoreError) -> [AppendResult] {
        for request in batch where request.events.isEmpty {
            throw .invalidRequest("command '\(request.commandId)' has no events to append")
        }
        return log.withLock { log in
            batch.map { request in
                if let range = log.commands[request.commandId] {
                    return .duplicate(CommittedCommand(commandId: request.commandId, events: Array(log.events[range])))
                }
                for (stream, expected) in request.expectations.sorted(by: { $0.key < $1.key }) {
                    let version = log.streamPositions[stream]?.count ?? 0
                    if !expected.isMet(byCurrentVersion: version) {
                        return .conflict(VersionConflict(stream: stream, expected: expected, actual: version))
                    }
                }
                let first = log.events.count
                for event in request.events {
                    let version = (log.streamPositions[event.stream]?.count ?? 0) + 1
                    log.streamPositions[event.stream, default: []].append(log.events.count)
                    log.events.append(
                        RecordedEvent(
                            position: Int64(log.events.count + 1), eventId: event.eventId, stream: event.stream,
                            version: version, type: event.type, data: event.data, metadata: request.metadata,
                            recordedAt: event.recordedAt))
                }
                let range = first...(log.events.count - 1)
                log.commands[request.commandId] = range
                return .committed(CommittedCommand(commandId: request.commandId, events: Array(log.events[range])))
            }
        }
    }

    public func readStream(_ stream: String, fromVersion: Int, limit: Int) throws(EventStoreError) -> [RecordedEvent] {
        log.withLock { log in
            guard let indexes = log.streamPositions[stream], limit > 0 else { return [] }
            let start = max(fromVersion, 1) - 1
            guard start < indexes.count else { return [] }
            return indexes[start..<min(indexes.count, start + limit)].map { log.events[$0] }
        }
    }

    public func read(fromPosition: Int64, limit: Int, categories: Set<String>?) throws(EventStoreError)
        -> [RecordedEvent]
    {
        log.withLock { log in
            let start = Int(max(fromPosition, 1) - 1)
            guard start < log.events.count, limit > 0 else { return [] }
            let tail = log.events[start...]
            guard let categories else { return Array(tail.prefix(limit)) }
            return Array(tail.lazy.filter { categories.contains($0.category) }.prefix(limit))
        }
    }

    public func headPosition() throws(EventStoreError) -> Int64 {
        log.withLock { Int64($0.events.count) }
    }

    public func committedCommand(_ commandId: String) throws(EventStoreError) -> CommittedCommand? {
        log.withLock { log in
            log.commands[commandId].map { CommittedCommand(commandId: commandId, events: Array(log.events[$0])) }
        }
    }
}
