public import LogbookApplication
import Synchronization

/// An `EventStore` held in memory, with the same promises as the durable ones except
/// durability. For unit tests of the layers above the store, never for integration tests.
public final class InMemoryEventStore: EventStore {
    private struct Log {
        var events: [RecordedEvent] = []
        var streamIndexes: [String: [Int]] = [:]  // indexes into `events`, by stream, in version order
        var commands: [String: CommandRecord] = [:]

        func version(of stream: String) -> Int { streamIndexes[stream]?.count ?? 0 }
    }

    private let log = Mutex(Log())

    /// Whether `send` defers the append until its results are taken.
    public let sendsAhead: Bool

    /// A store whose `send` appends at once, or (`sendsAhead`) only when its results are
    /// taken: other writers may commit in between, as beside a server that holds the append
    /// in flight.
    public init(sendsAhead: Bool = false) {
        self.sendsAhead = sendsAhead
    }

    public func send(_ batch: [AppendRequest]) throws(EventStoreError) -> AppendInFlight {
        guard sendsAhead else { return .appended { () throws(EventStoreError) in try append(batch) } }
        if let problem = batch.lazy.compactMap(\.malformation).first { throw .invalidRequest(problem) }
        return AppendInFlight(descriptor: nil) { () throws(EventStoreError) in try self.append(batch) }
    }

    public func append(_ batch: [AppendRequest]) throws(EventStoreError) -> [AppendResult] {
        if let problem = batch.lazy.compactMap(\.malformation).first { throw .invalidRequest(problem) }
        return log.withLock { log in
            var committedHere = Set<String>()
            return batch.map { request in
                let result = Self.append(request, to: &log, committedHere: committedHere)
                if case .committed = result { committedHere.insert(request.commandId) }
                return result
            }
        }
    }

    private static func append(_ request: AppendRequest, to log: inout Log, committedHere: Set<String>)
        -> AppendResult
    {
        if let record = log.commands[request.commandId] { return .duplicate(record) }
        if let refusal = request.refusal(committedInBatch: committedHere, currentVersion: log.version(of:)) {
            return refusal
        }
        let record: CommandRecord
        if let answer = request.answer {
            record = .answered(commandId: request.commandId, position: Int64(log.events.count), answer: answer)
        } else {
            var appended: [RecordedEvent] = []
            for event in request.events {
                let recorded = RecordedEvent(
                    position: Int64(log.events.count + 1), eventId: event.eventId, stream: event.stream,
                    version: log.version(of: event.stream) + 1, type: event.type, data: event.data,
                    metadata: request.metadata, recordedAt: event.recordedAt)
                log.streamIndexes[event.stream, default: []].append(log.events.count)
                log.events.append(recorded)
                appended.append(recorded)
            }
            record = .appended(CommittedCommand(commandId: request.commandId, events: appended))
        }
        log.commands[request.commandId] = record
        return .committed(record)
    }

    public func readStream(_ stream: String, fromVersion: Int, limit: Int) throws(EventStoreError) -> [RecordedEvent] {
        log.withLock { log in
            guard let indexes = log.streamIndexes[stream], limit > 0 else { return [] }
            let start = max(fromVersion, 1) - 1
            guard start < indexes.count else { return [] }
            return indexes[start...].prefix(limit).map { log.events[$0] }
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

    public func commandRecord(_ commandId: String) throws(EventStoreError) -> CommandRecord? {
        log.withLock { $0.commands[commandId] }
    }
}
