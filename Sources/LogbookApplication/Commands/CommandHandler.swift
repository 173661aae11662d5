public import LogbookDomain

/// The command use case. It takes a batch of commands in arrival order, decides each
/// against the state the earlier ones leave behind, appends them all in one group
/// commit, and reports each command's own outcome: one command's conflict or broken
/// rule never fails or reorders the others.
///
/// Guarantees:
/// - every decision (events, a refusal, or "nothing to change") is recorded with the
///   exact versions of the streams it read, and with the earlier commands of the batch
///   whose uncommitted events it read, so it never stands on state that did not commit,
///   whoever else writes to the log;
/// - a command whose record met a version conflict is decided again on fresh state (up
///   to `maximumAttempts`), so concurrent writers cost retries, not errors;
/// - a stream a command creates (`Command.streamsCreated`) that the handler knows nothing
///   of is not read on the first round: it is taken as new, and the append's expectation
///   (version 0) checks that. A stream that did exist fails that expectation and the
///   command is decided again, this time on what the log holds. Nearly every such stream
///   is new, and reading it is a store query that finds nothing;
/// - a command id once recorded returns its first outcome and appends nothing. Requests
///   refused before any state is read (unknown type, invalid values) are not recorded:
///   the same request always gets the same refusal.
///
/// A handler is owned by one thread (it keeps a cache); its store calls block.
public final class CommandHandler {
    public static let maximumAttempts = 3

    private let store: any EventStore
    private let clock: any Clock
    private let ids: any IDGenerator
    private let buckets: EmailBucketing
    private var cache: StreamStateCache
    /// Commands decided again since the handler was made: each time a command's record met
    /// a version conflict or leaned on a command that did not commit (`.conflict`,
    /// `.abandoned`) and another round decided it on fresh state, it counts once. On a log
    /// that several workers share, this is the cost of their conflicts.
    public private(set) var commandsDecidedAgain = 0

    /// `buckets` spreads email addresses over the streams of their claims: the vault's
    /// (`PersonalDataVault.buckets`) for a log with personal data sealed.
    public init(
        store: any EventStore, clock: any Clock, ids: any IDGenerator, buckets: EmailBucketing,
        cacheCapacity: Int = 10_000
    ) {
        self.store = store
        self.clock = clock
        self.ids = ids
        self.buckets = buckets
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
        var commands = [Command?](repeating: nil, count: requests.count)
        var pending: [Int] = []
        pending.reserveCapacity(requests.count)
        var firstIndexOfId: [String: Int] = [:]
        firstIndexOfId.reserveCapacity(requests.count)
        var repeats: [(index: Int, original: Int)] = []

        for (index, request) in requests.enumerated() {
            if let error = Self.problemWithIds(request) {
                outcomes[index] = .rejected(error)
            } else if let original = firstIndexOfId[request.commandId] {
                repeats.append((index, original))
            } else {
                do {
                    commands[index] = try CommandParser.parse(type: request.type, data: request.data, today: today)
                    firstIndexOfId[request.commandId] = index
                    pending.append(index)
                } catch {
                    outcomes[index] = .rejected(error)
                }
            }
        }

        prefetch(pending.compactMap { commands[$0] })
        for attempt in 1...Self.maximumAttempts where !pending.isEmpty {
            pending = appendRound(
                pending, requests: requests, commands: commands, attempt: attempt, outcomes: &outcomes)
            // Returned only when another round remains: each of these is decided again.
            commandsDecidedAgain += pending.count
        }
        for (index, original) in repeats {
            outcomes[index] = outcomes[original].map(Self.asRetry)
        }
        return outcomes.map { $0 ?? .rejected(ServiceError(.internal, "command was not handled")) }
    }

    /// One round: decide every pending command, record all decisions in one append, and
    /// collect outcomes. Returns the commands to decide again: those whose record met a
    /// version conflict or leaned on a command of the round that did not commit.
    private func appendRound(
        _ pending: [Int], requests: [CommandRequest], commands: [Command?], attempt: Int,
        outcomes: inout [CommandOutcome?]
    ) -> [Int] {
        let isLastAttempt = attempt == Self.maximumAttempts
        var overlay = StateOverlay(expectedStreams: pending.count * 2)
        var batch: [(index: Int, request: AppendRequest, touched: [StreamId])] = []
        batch.reserveCapacity(pending.count)
        let now = clock.now()

        for index in pending {
            guard let command = commands[index] else { continue }
            switch decide(command, request: requests[index], now: now, assumingNew: attempt == 1, overlay: &overlay) {
            case .finished(let outcome): outcomes[index] = outcome
            case .record(let append, let touched): batch.append((index, append, touched))
            }
        }
        guard !batch.isEmpty else { return [] }

        let results: [AppendResult]
        do {
            results = try store.append(batch.map(\.request))
        } catch {
            cache.removeAll()
            for entry in batch { outcomes[entry.index] = .rejected(ServiceError(error)) }
            return []
        }

        var retry: [Int] = []
        var untrusted = Set<StreamId>()
        for (entry, result) in zip(batch, results) {
            switch result {
            case .committed(let record):
                outcomes[entry.index] = AnswerCodec.outcome(of: record, wasRetry: false)
            case .duplicate(let record):
                untrusted.formUnion(entry.touched)
                outcomes[entry.index] = AnswerCodec.outcome(of: record, wasRetry: true)
            case .conflict(let conflict):
                untrusted.formUnion(entry.touched)
                if isLastAttempt {
                    outcomes[entry.index] = .rejected(ServiceError(conflict, cause: .contention))
                } else {
                    retry.append(entry.index)
                }
            case .unreadableRecord(let error):
                untrusted.formUnion(entry.touched)
                outcomes[entry.index] = .rejected(ServiceError(error))
            case .abandoned(let dependency):
                untrusted.formUnion(entry.touched)
                if isLastAttempt {
                    outcomes[entry.index] = .rejected(
                        ServiceError(
                            .wrongExpectedVersion,
                            "what this command reads kept changing while it was decided (it built on '\(dependency)'); send it again",
                            details: [("cause", .string(ServiceError.ConflictCause.contention.rawValue))]))
                } else {
                    retry.append(entry.index)
                }
            }
        }
        for stream in overlay.order where !untrusted.contains(stream) {
            if let entry = overlay.entries[stream] { cache.store(entry, for: stream) }
        }
        for stream in untrusted { cache.remove(stream) }
        return retry
    }

    private enum Decision {
        /// An outcome not to be recorded: the command id's first outcome, or a failure of the log.
        case finished(CommandOutcome)
        /// A decision to record: its events, or its answer when it appends nothing.
        case record(AppendRequest, touched: [StreamId])
    }

    /// Loads what `command` reads, checks the client's expectation, decides, and stages the
    /// decision as an append request guarded by what it read. With `assumingNew`, the
    /// streams it creates are taken as new unless the round or the cache knows them.
    private func decide(
        _ command: Command, request: CommandRequest, now: Timestamp, assumingNew: Bool, overlay: inout StateOverlay
    ) -> Decision {
        let commandId = request.commandId
        let metadata = EventMetadata(
            commandId: commandId, correlationId: request.correlationId ?? commandId,
            causationId: request.causationId ?? commandId)
        // The streams read and their versions, in reading order: a command reads one to three,
        // so a list searched in order costs less than a dictionary built per command.
        var read: [(stream: StreamId, version: Int)] = []
        read.reserveCapacity(4)
        func version(of stream: StreamId) -> Int? {
            for entry in read where entry.stream == stream { return entry.version }
            return nil
        }
        /// The append request that records `outcome` (events or an answer), guarded by what was read.
        func record(_ events: [NewEvent], answer: String?) -> Decision {
            var expectations: [String: ExpectedVersion] = [:]
            expectations.reserveCapacity(read.count)
            for entry in read { expectations[entry.stream.name] = .at(entry.version) }
            let append = AppendRequest(
                metadata: metadata, events: events, expectations: expectations,
                dependencies: overlay.writers(of: read.lazy.map(\.stream)), answer: answer)
            return .record(append, touched: read.map(\.stream))
        }
        func answer(_ outcome: CommandOutcome) -> Decision {
            record([], answer: AnswerCodec.encode(outcome))
        }
        do {
            // A command id seen before is not looked up here: the append finds it inside its
            // transaction and answers `.duplicate` with the first outcome, whatever this
            // decision says. Retries are rare; a lookup per command is not.
            var states = AggregateStates()
            let created = assumingNew ? command.streamsCreated : []
            while case let missing = command.streamsRead(given: states, buckets: buckets).filter({
                version(of: $0) == nil
            }),
                !missing.isEmpty
            {
                for stream in missing {
                    let entry = try load(stream, overlay: overlay, assumingNew: created.contains(stream))
                    states[stream] = entry.state
                    read.append((stream, entry.version))
                }
            }

            let primary = command.primaryStream
            if let version = version(of: primary), !request.expectedVersion.isMet(byCurrentVersion: version) {
                let conflict = VersionConflict(stream: primary.name, expected: request.expectedVersion, actual: version)
                return answer(.rejected(ServiceError(conflict, cause: .expectedVersion)))
            }

            let events = try CommandDecider.decide(command, given: states, buckets: buckets)
            guard !events.isEmpty else {
                return answer(.accepted(CommandAccepted(position: 0, events: [], wasRetry: false)))
            }
            let decision = record(
                events.map { event in
                    NewEvent(
                        eventId: ids.newEventId(), stream: event.stream.name, type: event.typeName,
                        data: EventCodec.encodedText(event), recordedAt: now.millisecondsSinceEpoch)
                }, answer: nil)
            for (stream, version) in read {
                overlay.stage(stream, StreamStateCache.Entry(version: version, state: states[stream]))
            }
            for event in events { overlay.apply(event, by: commandId) }
            return decision
        } catch let error as DomainError {
            return answer(.rejected(ServiceError(error)))
        } catch let error as EventStoreError {
            return .finished(firstOutcome(of: commandId) ?? .rejected(ServiceError(error)))
        } catch let error as EventDecodingError {
            return .finished(firstOutcome(of: commandId) ?? .rejected(.unreadable(error)))
        } catch {
            return .finished(.rejected(ServiceError(.internal, "the command failed", serverDetail: "\(error)")))
        }
    }

    /// The recorded outcome of a command id, when the log can tell it. Asked only when a
    /// decision failed on the log: a retried id whose streams hold events this build cannot
    /// read must still get its first outcome.
    private func firstOutcome(of commandId: String) -> CommandOutcome? {
        guard let recorded = try? store.commandRecord(commandId) else { return nil }
        return AnswerCodec.outcome(of: recorded, wasRetry: true)
    }

    /// Reads in one call to the store the streams the commands read first and the cache does
    /// not hold, except those they create (taken as new on the first round), so that the store
    /// reads them together instead of one query each: the users who buy or write, the email
    /// claims a registration checks. A stream it cannot read or fold is left out: `load` reads
    /// it again and reports the error to the command that needs it.
    private func prefetch(_ commands: [Command]) {
        var wanted: [StreamId] = []
        var seen = Set<StreamId>()
        let nothingKnown = AggregateStates()
        for command in commands {
            let created = command.streamsCreated
            for stream in command.streamsRead(given: nothingKnown, buckets: buckets)
            where !created.contains(stream) && seen.insert(stream).inserted && cache.entry(for: stream) == nil {
                wanted.append(stream)
            }
        }
        guard wanted.count > 1, let found = try? store.readWholeStreams(wanted.map(\.name)) else { return }
        for stream in wanted {
            guard let events = found[stream.name], let entry = try? Self.folded(stream, events) else { continue }
            cache.store(entry, for: stream)
        }
    }

    /// The state and version of `stream` after `events` (all of it, in version order).
    private static func folded(_ stream: StreamId, _ events: [RecordedEvent]) throws -> StreamStateCache.Entry {
        var entry = StreamStateCache.Entry(version: 0, state: .initial(for: stream))
        for recorded in events {
            entry.state = entry.state.evolved(by: try EventCodec.decode(recorded))
            entry.version = recorded.version
        }
        return entry
    }

    /// The state of `stream`: from this round's staged decisions, else from the cache, else
    /// (`assumingNew`) new, else folded from the log. A cached or assumed state is trusted
    /// without asking the log: if the stream holds other events, the append's expectation on
    /// that version fails, the stream leaves the cache, and the next round reads it afresh.
    /// An assumed state is not cached: only what committed or was read is.
    private func load(_ stream: StreamId, overlay: StateOverlay, assumingNew: Bool) throws -> StreamStateCache.Entry {
        if let staged = overlay.entries[stream] { return staged }
        if let cached = cache.entry(for: stream) { return cached }
        if assumingNew { return StreamStateCache.Entry(version: 0, state: .initial(for: stream)) }
        let entry = try Self.folded(stream, try store.readWholeStream(stream.name))
        cache.store(entry, for: stream)
        return entry
    }

    /// Ids are printable ASCII, so that every store and every language compares them
    /// byte for byte (Swift's `String` equality would merge canonically equal Unicode).
    private static func problemWithIds(_ request: CommandRequest) -> ServiceError? {
        let ids = [
            ("id", request.commandId), ("correlationId", request.correlationId), ("causationId", request.causationId),
        ]
        for case (let field, let value?) in ids {
            let bytes = value.utf8
            guard (1...CommandRequest.maximumIdLength).contains(bytes.count),
                bytes.allSatisfy({ (0x21...0x7E).contains($0) })
            else {
                return ServiceError(
                    .invalidInput,
                    "\(field): must be 1–\(CommandRequest.maximumIdLength) printable ASCII characters, without spaces",
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
