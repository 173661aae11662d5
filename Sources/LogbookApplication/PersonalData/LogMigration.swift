public import LogbookDomain
import LogbookJSON

/// Copies a log written before personal data was sealed into a new, empty log whose store
/// seals it (a `ProtectedEventStore`): every event at the same position, with the same id,
/// type, metadata and recording time, in the same order, each command's events in one
/// append as they were written, and every command recorded with an answer at the head it
/// was recorded at, so a retried id gets its first outcome from the copy too. Email claims
/// move from `email-<address>` to their bucket's stream (`email-<bucket>`, numbered anew
/// there); their payloads are unchanged. Payloads are copied as read (personal values in
/// clear) and sealed by the destination as it appends them.
///
/// The copy is checked as it goes: every append must commit at the source's positions.
public struct LogMigration {
    /// What a migration copied.
    public struct Summary: Sendable, Equatable {
        public var events: Int = 0
        public var commands: Int = 0
        public var answers: Int = 0
        public var claimsMoved: Int = 0
        public var head: Int64 = 0
    }

    /// Why a migration stopped. Nothing is ever written to the source.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case source(EventStoreError)
        case destination(EventStoreError)
        /// The destination holds events already.
        case destinationNotEmpty(head: Int64)
        /// The source breaks what the copy relies on (a claim without an address, a command
        /// whose events are not together, a position the copy could not keep).
        case unexpected(position: Int64, reason: String)

        public var description: String {
            switch self {
            case .source(let error): "reading the source log: \(error)"
            case .destination(let error): "writing the new log: \(error)"
            case .destinationNotEmpty(let head): "the new log is not empty (its head is \(head))"
            case .unexpected(let position, let reason): "at position \(position): \(reason)"
            }
        }
    }

    private let source: any EventStore
    private let answered: [CommandRecord]
    private let destination: any EventStore
    private let buckets: EmailBucketing
    private let batchSize: Int

    /// - Parameters:
    ///   - answered: the source's commands recorded with an answer, by the head they were
    ///     recorded at (`SQLiteEventStore.answeredCommands()`).
    ///   - buckets: the destination vault's, naming the claims' new streams.
    public init(
        source: any EventStore, answered: [CommandRecord], destination: any EventStore, buckets: EmailBucketing,
        batchSize: Int = 1_000
    ) {
        self.source = source
        self.answered = answered
        self.destination = destination
        self.buckets = buckets
        self.batchSize = max(1, batchSize)
    }

    /// Copies the whole source; `progress` is told the head copied after each batch.
    public func run(progress: (Int64) -> Void = { _ in }) throws(Failure) -> Summary {
        let start: Int64
        do {
            start = try destination.headPosition()
        } catch {
            throw .destination(error)
        }
        guard start == 0 else { throw .destinationNotEmpty(head: start) }
        var summary = Summary()
        var pending: [(request: AppendRequest, firstPosition: Int64?)] = []
        var answers = answered[...]
        var head: Int64 = 0
        var next: Int64 = 1
        var current: (metadata: EventMetadata, events: [NewEvent], first: Int64)?

        func flush() throws(Failure) {
            guard !pending.isEmpty else { return }
            let results: [AppendResult]
            do {
                results = try destination.append(pending.map(\.request))
            } catch {
                throw .destination(error)
            }
            for (entry, result) in zip(pending, results) {
                guard case .committed(let record) = result else {
                    throw .unexpected(
                        position: entry.firstPosition ?? head,
                        reason: "the copy of \(entry.request.commandId) did not commit: \(result)")
                }
                if let first = entry.firstPosition, record.events.first?.position != first {
                    throw .unexpected(
                        position: first,
                        reason: "the copy of \(entry.request.commandId) landed at \(record.events.first?.position ?? 0)"
                    )
                }
            }
            pending.removeAll(keepingCapacity: true)
            progress(head)
        }
        func finishCommand() throws(Failure) {
            guard let command = current else { return }
            current = nil
            pending.append(
                (AppendRequest(metadata: command.metadata, events: command.events, expectations: [:]), command.first))
            summary.commands += 1
            if pending.count >= batchSize { try flush() }
        }
        func answersUpTo(_ position: Int64) throws(Failure) {
            while let record = answers.first, record.position <= position {
                answers = answers.dropFirst()
                guard case .answered(let commandId, _, let answer) = record else { continue }
                pending.append(
                    (
                        AppendRequest(
                            metadata: EventMetadata(
                                commandId: commandId, correlationId: commandId, causationId: commandId),
                            events: [], expectations: [:], answer: answer), nil
                    ))
                summary.answers += 1
                if pending.count >= batchSize { try flush() }
            }
        }

        while true {
            let page: [RecordedEvent]
            do {
                page = try source.read(fromPosition: next, limit: batchSize, categories: nil)
            } catch {
                throw .source(error)
            }
            guard let last = page.last else { break }
            for event in page {
                guard event.position == head + 1 else {
                    throw .unexpected(position: event.position, reason: "the source has a hole before it")
                }
                if current?.metadata.commandId != event.metadata.commandId {
                    try finishCommand()
                    try answersUpTo(head)
                    if pending.contains(where: { $0.request.commandId == event.metadata.commandId }) {
                        throw .unexpected(
                            position: event.position,
                            reason: "the events of command \(event.metadata.commandId) are not together")
                    }
                    current = (event.metadata, [], event.position)
                }
                let stream = try newStream(of: event)
                if stream != event.stream { summary.claimsMoved += 1 }
                current?.events.append(
                    NewEvent(
                        eventId: event.eventId, stream: stream, type: event.type, data: event.data,
                        recordedAt: event.recordedAt))
                head = event.position
                summary.events += 1
            }
            next = last.position + 1
        }
        try finishCommand()
        try answersUpTo(Int64.max)
        try flush()
        summary.head = head
        return summary
    }

    /// The stream `event` belongs on in the new log: its bucket's for an email claim on an
    /// address's stream, else its own.
    private func newStream(of event: RecordedEvent) throws(Failure) -> String {
        guard event.type == "EmailClaimed" || event.type == "EmailReleased" else { return event.stream }
        if case .email? = StreamId(name: event.stream) { return event.stream }
        guard case .string(let address)? = (try? JSONParser.parse(event.data))?.objectValue?["email"],
            let email = try? NormalizedEmail(normalized: address)
        else {
            throw .unexpected(position: event.position, reason: "an email claim without a readable address")
        }
        return StreamId.email(buckets.bucket(of: email)).name
    }
}
