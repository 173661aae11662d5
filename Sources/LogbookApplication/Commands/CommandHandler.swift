import LogbookDomain

/// The command use case. It takes a batch of commands in arrival order, decides each
/// against the state the earlier ones leave behind, appends them all in one group
/// commit, and reports each command's own outcome: one command's conflict or broken
/// rule never fails or reorders the others.
///
/// Guarantees:
/// - every decision is appended with the exact versions of the streams it read, so it
///   never commits on stale state, whoever else writes to the log;
/// - a command whose append met a version conflict is decided again on fresh state
///   (up to `maximumAttempts`), so concurrent writers cost retries, not errors;
/// - a command id already committed returns its first outcome and appends nothing.
///
/// A handler is owned by one thread (it keeps a cache); its store calls block.
public final class CommandHandler {
    public static let maximumAttempts = 3

    private let store: any EventStore
    private let clock: any Clock
    private let ids: any IDGenerator
    private var cache: StreamStateCache

    public init(store: any EventStore, clock: any Clock, ids: any IDGenerator, cacheCapacity: Int = 50_000) {
        self.store = store
        self.clock = clock
        self.ids = ids
        self.cache = StreamStateCache(capacity: cacheCapacity)
    }

    /// Handles one command on its own.
    public func handle(_ request: CommandRequest) -> CommandOutcome {
        handle([request])[0]
    }

    /// Handles a batch; outcomes come back in request order.
    public func handle(_ requests: [CommandRequest]) -> [CommandOutcome] {
        var outcomes = [CommandOutcome?](repeating: nil, count: requests.count)
        let today = clock.now().utcDate
        var commands: [Int: Command] = [:]
        var firstIndexOfId: [String: Int] = [:]
        var repeats: [(index: Int, original: Int)] = []

        for (index, request) in requests.enumerated() {
            if let error = Self.problemWithIds(request) {
                outcomes[index] = .rejected(error)
            } else if let original = firstIndexOfId[request.commandId] {
                repeats.append((index, original))
            } else {
                firstIndexOfId[request.commandId] = index
                do {
                    commands[index] = try CommandParser.parse(type: request.type, data: request.data, today: today)
                } catch {
                    outcomes[index] = .rejected(error)
                }
            }
        }

        var pending = commands.keys.sorted()
        for attempt in 1...Self.maximumAttempts where !pending.isEmpty {
            pending = appendRound(
                pending, requests: requests, commands: commands, isLastAttempt: attempt == Self.maximumAttempts,
                outcomes: &outcomes)
        }
        for (index, original) in repeats {
            outcomes[index] = outcomes[original].map(Self.asRetry)
        }
        return outcomes.map { $0 ?? .rejected(ServiceError(.internal, "command was not handled")) }
    }

    /// One round: decide every pending command, append them together, record outcomes.
    /// Returns the commands to decide again: those whose append met a version conflict, and
    /// those refused (or found to change nothing) on state that such a command had staged.
    private func appendRound(
        _ pending: [Int], requests: [CommandRequest], commands: [Int: Command], isLastAttempt: Bool,
        outcomes: inout [CommandOutcome?]
    ) -> [Int] {
        var overlay = StateOverlay()
        var batch: [(index: Int, request: AppendRequest, touched: [StreamId])] = []
        var provisional: [(index: Int, outcome: CommandOutcome, readFromRound: Set<StreamId>)] = []
        let now = clock.now()

        for index in pending {
            guard let command = commands[index] else { continue }
            switch decide(command, request: requests[index], now: now, overlay: &overlay) {
            case .finished(let outcome): outcomes[index] = outcome
            case .provisional(let outcome, let read): provisional.append((index, outcome, read))
            case .append(let append, let touched): batch.append((index, append, touched))
            }
        }

        var retry: [Int] = []
        var untrusted = Set<StreamId>()
        if !batch.isEmpty {
            let results: [AppendResult]
            do {
                results = try store.append(batch.map(\.request))
            } catch {
                cache.removeAll()
                // Nothing committed: the provisional outcomes lose their footing too.
                for index in batch.map(\.index) + provisional.map(\.index) {
                    outcomes[index] = .rejected(ServiceError(error))
                }
                return []
            }
            for (entry, result) in zip(batch, results) {
                switch result {
                case .committed(let committed):
                    outcomes[entry.index] = .accepted(
                        CommandAccepted(position: committed.lastPosition, events: committed.events, wasRetry: false))
                case .duplicate(let committed):
                    untrusted.formUnion(entry.touched)
                    outcomes[entry.index] = .accepted(
                        CommandAccepted(position: committed.lastPosition, events: committed.events, wasRetry: true))
                case .conflict(let conflict):
                    untrusted.formUnion(entry.touched)
                    if isLastAttempt {
                        outcomes[entry.index] = .rejected(ServiceError(conflict))
                    } else {
                        retry.append(entry.index)
                    }
                }
            }
        }
        for entry in provisional {
            if entry.readFromRound.isDisjoint(with: untrusted) {
                outcomes[entry.index] = entry.outcome
            } else if isLastAttempt {
                outcomes[entry.index] = .rejected(
                    ServiceError(
                        .wrongExpectedVersion, "the streams this command reads kept changing while it was decided"))
            } else {
                retry.append(entry.index)
            }
        }
        for (stream, entry) in overlay.entries {
            if untrusted.contains(stream) { cache.remove(stream) } else { cache.store(entry, for: stream) }
        }
        resolveUnchangedPositions(in: &outcomes, among: pending)
        return retry.sorted()
    }

    /// A command that changed nothing answers with the log's head after its round, which
    /// covers everything its decision saw (read-your-writes holds for it too).
    private func resolveUnchangedPositions(in outcomes: inout [CommandOutcome?], among indexes: [Int]) {
        let unchanged = indexes.filter {
            if case .accepted(let accepted)? = outcomes[$0] { accepted.events.isEmpty } else { false }
        }
        guard !unchanged.isEmpty else { return }
        do {
            let head = try store.headPosition()
            for index in unchanged {
                outcomes[index] = .accepted(CommandAccepted(position: head, events: [], wasRetry: false))
            }
        } catch {
            for index in unchanged { outcomes[index] = .rejected(ServiceError(error)) }
        }
    }

    private enum Decision {
        /// An outcome that stands whatever becomes of the rest of the round.
        case finished(CommandOutcome)
        /// An outcome reached on streams that earlier commands of this round changed: it
        /// stands only if those commands commit.
        case provisional(CommandOutcome, readFromRound: Set<StreamId>)
        case append(AppendRequest, touched: [StreamId])
    }

    /// Loads what `command` reads, checks the client's expectation, decides, and stages the events.
    private func decide(_ command: Command, request: CommandRequest, now: Timestamp, overlay: inout StateOverlay)
        -> Decision
    {
        var versions: [StreamId: Int] = [:]
        let written = overlay.written
        func conclude(_ outcome: CommandOutcome) -> Decision {
            let readFromRound = written.intersection(versions.keys)
            return readFromRound.isEmpty ? .finished(outcome) : .provisional(outcome, readFromRound: readFromRound)
        }
        do {
            if let committed = try store.committedCommand(request.commandId) {
                return .finished(
                    .accepted(
                        CommandAccepted(position: committed.lastPosition, events: committed.events, wasRetry: true)))
            }
            var states = AggregateStates()
            while case let missing = command.streamsRead(given: states).filter({ versions[$0] == nil }),
                !missing.isEmpty
            {
                for stream in missing {
                    let entry = try load(stream, overlay: overlay)
                    states[stream] = entry.state
                    versions[stream] = entry.version
                }
            }

            let primary = command.primaryStream
            if let version = versions[primary], !request.expectedVersion.isMet(byCurrentVersion: version) {
                let conflict = VersionConflict(stream: primary.name, expected: request.expectedVersion, actual: version)
                return conclude(.rejected(ServiceError(conflict)))
            }

            let events = try CommandDecider.decide(command, given: states)
            guard !events.isEmpty else {
                // The position is filled in once the round's appends are done.
                return conclude(.accepted(CommandAccepted(position: 0, events: [], wasRetry: false)))
            }

            for (stream, version) in versions {
                overlay.stage(stream, StreamStateCache.Entry(version: version, state: states[stream]))
            }
            for event in events { overlay.apply(event) }
            let commandId = request.commandId
            let append = AppendRequest(
                metadata: EventMetadata(
                    commandId: commandId, correlationId: request.correlationId ?? commandId,
                    causationId: request.causationId ?? commandId),
                events: events.map { event in
                    NewEvent(
                        eventId: ids.newEventId(), stream: event.stream.name, type: event.typeName,
                        data: EventCodec.encodedText(event), recordedAt: now.millisecondsSinceEpoch)
                },
                expectations: Dictionary(
                    uniqueKeysWithValues: versions.map { ($0.key.name, ExpectedVersion.at($0.value)) }))
            return .append(append, touched: Array(versions.keys))
        } catch let error as DomainError {
            return conclude(.rejected(ServiceError(error)))
        } catch let error as EventStoreError {
            return .finished(.rejected(ServiceError(error)))
        } catch let error as EventDecodingError {
            return .finished(.rejected(ServiceError(.internal, "the event log holds an unreadable event: \(error)")))
        } catch {
            return .finished(.rejected(ServiceError(.internal, "\(error)")))
        }
    }

    /// The state of `stream`: from this round's staged decisions, else the cache brought up
    /// to date with whatever the log holds beyond it (another process may have written).
    private func load(_ stream: StreamId, overlay: StateOverlay) throws -> StreamStateCache.Entry {
        if let staged = overlay.entries[stream] { return staged }
        let cached = cache.entry(for: stream)
        var entry = cached ?? StreamStateCache.Entry(version: 0, state: .initial(for: stream))
        let newer = try store.readWholeStream(stream.name, fromVersion: entry.version + 1)
        for recorded in newer {
            entry.state = entry.state.evolved(by: try EventCodec.decode(recorded))
            entry.version = recorded.version
        }
        if cached == nil || !newer.isEmpty { cache.store(entry, for: stream) }
        return entry
    }

    private static func problemWithIds(_ request: CommandRequest) -> ServiceError? {
        let ids = [
            ("id", request.commandId), ("correlationId", request.correlationId), ("causationId", request.causationId),
        ]
        for case (let field, let value?) in ids {
            let length = value.utf8.count
            guard length >= 1, length <= CommandRequest.maximumIdLength,
                !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
            else {
                return ServiceError(
                    .invalidInput,
                    "\(field): must be 1–\(CommandRequest.maximumIdLength) bytes with no control characters",
                    details: [("field", .string(field))])
            }
        }
        return nil
    }

    private static func asRetry(_ outcome: CommandOutcome) -> CommandOutcome {
        guard case .accepted(var accepted) = outcome else { return outcome }
        accepted.wasRetry = true
        return .accepted(accepted)
    }
}

/// The stream states a round of decisions has produced but not yet committed.
struct StateOverlay {
    private(set) var entries: [StreamId: StreamStateCache.Entry] = [:]
    /// The streams that staged decisions write to.
    private(set) var written = Set<StreamId>()

    /// Records the state a decision read, unless a staged one is already newer.
    mutating func stage(_ stream: StreamId, _ entry: StreamStateCache.Entry) {
        if entries[stream] == nil { entries[stream] = entry }
    }

    /// Advances a stream by one decided event.
    mutating func apply(_ event: DomainEvent) {
        let stream = event.stream
        var entry = entries[stream] ?? StreamStateCache.Entry(version: 0, state: .initial(for: stream))
        entry.state = entry.state.evolved(by: event)
        entry.version += 1
        entries[stream] = entry
        written.insert(stream)
    }
}
