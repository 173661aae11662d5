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
///   the same request always gets the same refusal;
/// - on a store that sends appends ahead, the next batch may be decided while one is in
///   flight (`decide`, then `send` once `land` returned), on the state that one leaves if
///   it all commits; a decision that touched a stream a command of it touched and did not
///   commit is not sent but decided again after its batch's first round, since what it
///   read may be a state the log never held (its version may match one another writer
///   made); it has the attempts left after the first. One append is in flight at a time.
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
    /// The batch sent and not yet landed, and its first round's append.
    private var flying: FlyingBatch?
    private var inFlight: AppendInFlight?
    /// Batches sent since the handler was made.
    private var batchesSent = 0
    /// The streams the last batch landed leaves untrustworthy to a batch decided over it
    /// (`settle`).
    private var suspect = Set<StreamId>()

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
        send(decide(requests))
        return land()
    }

    // MARK: A batch decided while the one before is appended

    /// Whether the store's appends return before they are done (`EventStore.sendsAhead`),
    /// so that deciding the next batch while one is in flight overlaps its append.
    public var sendsAhead: Bool { store.sendsAhead }

    /// A batch was sent (`send`) and its outcomes not yet taken (`land`).
    public var hasBatchInFlight: Bool { flying != nil }

    /// The descriptor the answer of the batch in flight arrives on (`AppendInFlight`): nil
    /// with none in flight, or one answered already.
    public var inFlightDescriptor: Int32? { inFlight?.descriptor }

    /// When the store stops waiting for the answer of the batch in flight
    /// (`AppendInFlight.deadline`): poll its descriptor no longer, and `land` it.
    public var inFlightDeadline: ContinuousClock.Instant? { inFlight?.deadline }

    /// Parses a batch and decides its first round. With a batch in flight, its decisions
    /// build on the state that batch leaves if all of it commits; `send` checks that
    /// assumption once it has landed, and decides again, after this batch's first round,
    /// every command that touched a stream which a command of that batch touched without
    /// committing.
    public func decide(_ requests: [CommandRequest]) -> DecidedBatch {
        var decided = DecidedBatch(
            work: BatchWork([], today: clock.now().utcDate),
            round: DecidedRound(overlay: StateOverlay(expectedStreams: requests.count * 2)), basis: batchesSent,
            overFlying: flying != nil)
        decide(requests, into: &decided)
        return decided
    }

    /// Parses more commands into a decided batch not yet sent and decides them after its
    /// others, on the state those leave (and, with a batch in flight, that one's).
    public func decide(_ more: [CommandRequest], into decided: inout DecidedBatch) {
        precondition(batchesSent == decided.basis, "a batch was sent after this one was decided")
        let pending = decided.work.add(more, today: clock.now().utcDate)
        let base = flying?.round.overlay
        decided.overFlying = decided.overFlying || base != nil
        prefetch(pending.compactMap { decided.work.commands[$0] }, besides: base, decided.round.overlay)
        decideRound(pending, &decided.work, into: &decided.round, attempt: 1, base: base)
    }

    /// Sends a decided batch's first round to the store (`EventStore.send`); only with no
    /// batch in flight (the one it was decided over landed) and none sent since it was
    /// decided. Its commands that touched a stream which a command of that batch touched
    /// without committing are not sent: `land` decides them again.
    public func send(_ decided: DecidedBatch) {
        precondition(flying == nil, "a batch is in flight: land it first")
        precondition(batchesSent == decided.basis, "a batch was sent after this one was decided")
        var round = decided.round
        if decided.overFlying { round.dropDecisionsOn(suspect) }
        batchesSent += 1
        if !round.entries.isEmpty {
            do {
                inFlight = try store.send(round.entries.map(\.request))
            } catch {
                inFlight = .answered(.failure(error))
            }
        }
        flying = FlyingBatch(work: decided.work, round: round)
    }

    /// Waits for the batch in flight, decides again what its first round could not commit
    /// (with appends of their own, as `handle` does), and returns its outcomes in request order.
    public func land() -> [CommandOutcome] {
        guard let landing = flying.take() else { preconditionFailure("no batch is in flight") }
        var work = landing.work
        let results: Result<[AppendResult], EventStoreError>
        if let append = inFlight.take() {
            do {
                results = .success(try append.results())
            } catch {
                results = .failure(error)
            }
        } else {
            results = .success([])
        }
        var settled = settle(landing.round, results, attempt: 1, &work.outcomes)
        suspect = settled.suspect
        settled.retry += landing.round.dropped
        var pending = settled.retry.sorted()
        commandsDecidedAgain += pending.count
        for attempt in 2...Self.maximumAttempts where !pending.isEmpty {
            pending = appendRound(pending, &work, attempt: attempt)
            // Returned only when another round remains: each of these is decided again.
            commandsDecidedAgain += pending.count
        }
        return work.finished()
    }

    // MARK: Rounds

    /// One round decided and appended at once (every round after a batch's first): returns
    /// the commands to decide again.
    private func appendRound(_ pending: [Int], _ work: inout BatchWork, attempt: Int) -> [Int] {
        var round = DecidedRound(overlay: StateOverlay(expectedStreams: pending.count * 2))
        decideRound(pending, &work, into: &round, attempt: attempt, base: nil)
        guard !round.entries.isEmpty else { return [] }
        let results: Result<[AppendResult], EventStoreError>
        do {
            results = .success(try store.append(round.entries.map(\.request)))
        } catch {
            results = .failure(error)
        }
        return settle(round, results, attempt: attempt, &work.outcomes).retry
    }

    /// Decides every pending command on the state the earlier ones (and the round's) leave,
    /// and `base`'s, the batch in flight: the decisions to record join the round, the
    /// outcomes of the others the work.
    private func decideRound(
        _ pending: [Int], _ work: inout BatchWork, into round: inout DecidedRound, attempt: Int, base: StateOverlay?
    ) {
        round.entries.reserveCapacity(round.entries.count + pending.count)
        let now = clock.now()
        for index in pending {
            guard let command = work.commands[index] else { continue }
            let decision = decide(
                command, request: work.requests[index], now: now, assumingNew: attempt == 1, overlay: &round.overlay,
                base: base)
            switch decision {
            case .finished(let outcome): work.outcomes[index] = outcome
            case .record(let request, let touched):
                round.entries.append(DecidedEntry(index: index, request: request, touched: touched))
            }
        }
    }

    /// Collects a round's outcomes from its append's results and caches what committed.
    /// Returns the commands to decide again (those whose record met a version conflict or
    /// leaned on a command of the round that did not commit), and the streams a decision
    /// built on this round may not trust: those read or written by a command that did not commit.
    private func settle(
        _ round: DecidedRound, _ appended: Result<[AppendResult], EventStoreError>, attempt: Int,
        _ outcomes: inout [CommandOutcome?]
    ) -> (retry: [Int], suspect: Set<StreamId>) {
        let results: [AppendResult]
        switch appended {
        case .success(let answered): results = answered
        case .failure(let error):
            cache.removeAll()
            var suspect = Set<StreamId>()
            for entry in round.entries {
                outcomes[entry.index] = .rejected(ServiceError(error))
                suspect.formUnion(entry.touched)
            }
            return ([], suspect)
        }
        let isLastAttempt = attempt == Self.maximumAttempts
        var retry: [Int] = []
        var untrusted = Set<StreamId>()
        for (entry, result) in zip(round.entries, results) {
            if case .committed = result {} else { untrusted.formUnion(entry.touched) }
            switch result {
            case .committed(let record):
                outcomes[entry.index] = AnswerCodec.outcome(of: record, wasRetry: false)
            case .duplicate(let record):
                outcomes[entry.index] = AnswerCodec.outcome(of: record, wasRetry: true)
            case .conflict(let conflict):
                if isLastAttempt {
                    outcomes[entry.index] = .rejected(ServiceError(conflict, cause: .contention))
                } else {
                    retry.append(entry.index)
                }
            case .unreadableRecord(let error):
                outcomes[entry.index] = .rejected(ServiceError(error))
            case .abandoned(let dependency):
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
        for stream in round.overlay.order where !untrusted.contains(stream) {
            if let entry = round.overlay.entries[stream] { cache.store(entry, for: stream) }
        }
        for stream in untrusted.union(round.forgotten) { cache.remove(stream) }
        return (retry, untrusted)
    }

    private enum Decision {
        /// An outcome not to be recorded: the command id's first outcome, or a failure of the log.
        case finished(CommandOutcome)
        /// A decision to record: its events, or its answer when it appends nothing.
        case record(AppendRequest, touched: [StreamId])
    }

    /// Loads what `command` reads, checks the client's expectation, decides, and stages the
    /// decision as an append request guarded by what it read. With `assumingNew`, the
    /// streams it creates are taken as new unless the round, `base` or the cache knows them.
    private func decide(
        _ command: Command, request: CommandRequest, now: Timestamp, assumingNew: Bool, overlay: inout StateOverlay,
        base: StateOverlay?
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
        func record(_ events: [NewEvent], answer: String?, writing written: [StreamId] = []) -> Decision {
            var expectations: [String: ExpectedVersion] = [:]
            expectations.reserveCapacity(read.count)
            for entry in read { expectations[entry.stream.name] = .at(entry.version) }
            let append = AppendRequest(
                metadata: metadata, events: events, expectations: expectations,
                dependencies: overlay.writers(of: read.lazy.map(\.stream)), answer: answer)
            var touched = read.map(\.stream)
            for stream in written where !touched.contains(stream) { touched.append(stream) }
            return .record(append, touched: touched)
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
                    let entry = try load(stream, overlay: overlay, base: base, assumingNew: created.contains(stream))
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
                }, answer: nil, writing: events.map(\.stream))
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
    /// claims a registration checks; not those `base` (the batch in flight) or `round` (the
    /// batch's earlier decisions) hold. A stream it cannot read or fold is left out: `load`
    /// reads it again and reports the error to the command that needs it.
    private func prefetch(_ commands: [Command], besides base: StateOverlay?, _ round: StateOverlay? = nil) {
        var wanted: [StreamId] = []
        var seen = Set<StreamId>()
        let nothingKnown = AggregateStates()
        for command in commands {
            let created = command.streamsCreated
            for stream in command.streamsRead(given: nothingKnown, buckets: buckets)
            where !created.contains(stream) && seen.insert(stream).inserted && cache.entry(for: stream) == nil
                && base?.entries[stream] == nil && round?.entries[stream] == nil
            {
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

    /// The state of `stream`: from this round's staged decisions, else from `base` (the batch
    /// in flight, as if it committed), else from the cache, else (`assumingNew`) new,
    /// else folded from the log. A cached or assumed state is trusted without asking the log:
    /// if the stream holds other events, the append's expectation on that version fails, the
    /// stream leaves the cache, and the next round reads it afresh. An assumed state is not
    /// cached: only what committed or was read is.
    private func load(_ stream: StreamId, overlay: StateOverlay, base: StateOverlay?, assumingNew: Bool) throws
        -> StreamStateCache.Entry
    {
        if let staged = overlay.entries[stream] { return staged }
        if let staged = base?.entries[stream] { return staged }
        if let cached = cache.entry(for: stream) { return cached }
        if assumingNew { return StreamStateCache.Entry(version: 0, state: .initial(for: stream)) }
        let entry = try Self.folded(stream, try store.readWholeStream(stream.name))
        cache.store(entry, for: stream)
        return entry
    }
}
