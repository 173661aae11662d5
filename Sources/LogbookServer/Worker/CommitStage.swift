import LogbookApplication
import LogbookLocks
import LogbookZMQ

/// The worker's commit stage, between the command loop's reading and its replies: an
/// append thread that decides and appends one batch at a time (`CommandHandler`: decide,
/// one group commit), and, for a store that commits before its sync (a `LogFlusher`: SQLite
/// with deferred syncs), a flush thread that makes the committed batches durable, all of
/// those waiting in one sync, while the append thread already appends the next batch. So
/// one batch's sync overlaps the next one's processor work, and the command loop's thread,
/// which owns every socket, reads the next requests and delivers finished batches
/// meanwhile. Without a flusher each append is durable when it returns (`synchronous=FULL`,
/// PostgreSQL) and a batch is finished as soon as it is appended. On a log that sends
/// appends ahead (PostgreSQL), the append thread decides the next batch while the last
/// one's append is in flight (`CommandHandler.decide`, `send`, `land`), so the worker's
/// deciding overlaps the server's appending; one append is in flight at a time.
///
/// Which route a batch takes to a durable commit (inline on the loop's thread, synced by the
/// append thread, or by the flush thread), what a failed sync does and when a batch may be
/// handed over are `CommitStageRules`, a value this shell keeps under one `ConditionLock`:
/// each thread makes one transition under the lock, then does what it returned (decide and
/// append, sync, wake the waiting threads, wake the loop's poll) with the lock released.
///
/// Batches come back through `takeFinished()` in the order they were submitted, each only
/// once durable; `finished` (a pipe in the loop's poll) becomes readable when one is ready.
/// If a sync fails, every command of the batches it covered is refused as `unavailable`
/// (they may or may not survive a power cut: their clients send them again, with their ids),
/// and so is every later one, without being appended (after a failed sync nothing more can
/// be said durable: `LogFlusher`); the flush thread ends, so its heartbeat stops and a
/// supervisor's watchdog restarts the worker. At most `maximumInFlight` batches are in the
/// stage at once: while a sync is slow, requests wait in libzmq's bounded queue, not in
/// this process.
///
/// The handler (and through it the store's connection) is used by one thread at a time:
/// the append thread, or the command loop's while it runs a batch inline; the flusher
/// likewise by one at a time. Each thread checks in with its own heartbeat between batches
/// and while idle, so a commit or a sync that hangs stops the supervisor's watchdog pings.
/// `submit`, `runInline`, `takeFinished`, `waitForFinished` and `stop` are called from one
/// thread (the command loop's); `stop()` lets the batches in hand finish and joins both threads.
final class CommitStage: @unchecked Sendable {
    /// A batch's outcomes, in request order, and the handler's count of commands decided again.
    struct Finished: Sendable, Equatable {
        var outcomes: [CommandOutcome]
        var commandsDecidedAgain: Int
    }

    typealias Rules = CommitStageRules<[CommandRequest], Finished>

    /// How often an append thread sending ahead takes the commands that joined the batch it
    /// decides while it waits for the answer of the one in flight.
    static let joinsEveryMilliseconds = 2

    /// Batches in the stage at most (`CommitStageRules.maximumInFlight`).
    static var maximumInFlight: Int { Rules.maximumInFlight }

    /// A batch of fewer commands than this may be synced without a hand-over to the flush
    /// thread (`CommitStageRules.inlineFlushBelow`).
    static var inlineFlushBelow: Int { Rules.inlineFlushBelow }

    /// Readable once a submitted batch finished (drained by `takeFinished()`), and once the
    /// append thread is free for the next batch (`acceptsBatch`).
    let finished: WakeUpPipe
    /// Readable once the loop handed over commands while the append thread, sending ahead,
    /// waits for the answer of the batch in flight: it decides them meanwhile.
    private let submissions: WakeUpPipe
    /// The append thread decides the next batch while the last one's append is in flight.
    private let sendsAhead: Bool
    /// Set once, in `init`; joined by `stop()`.
    private var threads: [OwnedThread] = []
    /// The handler, used by one thread at a time: the one the rules gave it to.
    private let owned: HandlerOwnership
    private let flusher: (any LogFlusher)?
    private let turns: (any WriteTurns)?
    private let rules: ConditionLock<Rules>

    /// Starts the append thread, which owns `handler` from now on, and with `flusher` the
    /// flush thread, which checks in with `flushHeartbeat`. With `flusher` and `turns` (the
    /// write turns of the handler's store) `runInline` may run a batch on its caller's thread.
    init(
        handler: CommandHandler, flusher: (any LogFlusher)? = nil, turns: (any WriteTurns)? = nil,
        heartbeat: Heartbeat, flushHeartbeat: Heartbeat = Heartbeat()
    ) throws(ZMQError) {
        finished = try WakeUpPipe()
        submissions = try WakeUpPipe()
        owned = HandlerOwnership(handler)
        self.flusher = flusher
        self.turns = turns
        sendsAhead = flusher == nil && handler.sendsAhead
        rules = ConditionLock(
            Rules(flushes: flusher != nil, runsInline: flusher != nil && turns != nil, sendsAhead: sendsAhead))
        threads.append(OwnedThread(name: "logbook-commits") { [self] in serveAppends(heartbeat: heartbeat) })
        if let flusher {
            threads.append(
                OwnedThread(name: "logbook-flushes") { [self] in serveFlushes(flusher, heartbeat: flushHeartbeat) })
        }
    }

    /// The append thread can take a batch now: none waits for it, it holds fewer than it may
    /// (`CommitStageRules.holdsAtMost`), and fewer than `maximumInFlight` are in the stage.
    var acceptsBatch: Bool { rules.withLock { $0.acceptsBatch } }

    /// No batch is in the stage, and none finished and not yet taken.
    var isIdle: Bool { rules.withLock { $0.isIdle } }

    /// Decides, appends and syncs a small batch (under `inlineFlushBelow` commands) on the
    /// caller's thread when the rules allow it (`CommitStageRules.claimInline`: the stage
    /// idle, no sync failed) and the writer's lock is free now (`WriteTurns.takeTurnIfFree`):
    /// a lone command at a quiet moment then costs no hand-over to the append thread and
    /// back. Only on a log with a flusher and turns (SQLite's deferred syncs), whose append is
    /// local and short and never waits for another connection: a held lock sends the batch
    /// to the stage, whose append waits for it while the caller (the command loop) answers
    /// `Status`; a second round of deciding (after a conflict) that finds the lock taken
    /// meanwhile refuses its commands as `unavailable` (busy) rather than wait, and their
    /// clients send them again. The caller does wait for the sync; one that hangs stops its
    /// heartbeat as it would the flush thread's. Nil when it does not run: submit the batch
    /// then. Its outcomes are returned, not passed through `takeFinished()`.
    func runInline(_ requests: [CommandRequest]) -> Finished? {
        guard let flusher, let turns, rules.withLock({ $0.claimInline(commands: requests.count) }) else {
            return nil
        }
        // Any failure to take the turn is met again, and reported, by the stage's own append.
        guard (try? turns.takeTurnIfFree()) == true else {
            wake(rules.withLock { $0.inlineDeclined() })
            return nil
        }
        let handler = owned.handler
        let batch = Finished(outcomes: handler.handle(requests), commandsDecidedAgain: handler.commandsDecidedAgain)
        // A batch that appended nothing (every command refused before its record) left the turn open.
        turns.endTurn()
        let failure = Self.failure(of: flusher)
        let (refusal, wakes) = rules.withLock { $0.inlineFinished(syncFailure: failure) }
        wake(wakes)
        return refusal.map { Self.refused(batch.outcomes.count, $0, decidedAgain: batch.commandsDecidedAgain) }
            ?? batch
    }

    /// Adds commands to the batch handed over last, on a log that sends appends ahead, while
    /// it is still to be taken or open and would hold no more than `limit`
    /// (`CommitStageRules.join`): true when it did. The append thread takes them within
    /// `joinsEveryMilliseconds`, or when it sends that batch.
    func join(_ requests: [CommandRequest], upTo limit: Int) -> Bool {
        rules.withLock { $0.join(requests, upTo: limit) }
    }

    /// Hands a batch to the append thread; call only when `acceptsBatch`.
    func submit(_ requests: [CommandRequest]) {
        wake(rules.withLock { $0.submit(requests) })
        if sendsAhead { submissions.wake() }
    }

    /// The batches finished since the last call, in the order they were submitted; each
    /// comes back once.
    func takeFinished() -> [Finished] {
        finished.drain()
        return rules.withLock { $0.takeDone() }.map(Self.outcome)
    }

    /// Waits until every batch in the stage finished and returns those not yet taken.
    func waitForFinished() -> [Finished] {
        rules.withLock(when: \.allFinished) { $0.takeDone() }.map(Self.outcome)
    }

    /// Lets the batches in hand finish (their outcomes stay for `waitForFinished`), then ends
    /// the threads and waits for them. Safe to call more than once.
    func stop() {
        wake(rules.withLock { $0.stop() })
        for thread in threads { thread.join() }
    }

    private func serveAppends(heartbeat: Heartbeat) {
        let handler = owned.handler
        while true {
            heartbeat.beat()
            if handler.hasBatchInFlight {
                landAndSendNext(handler, heartbeat: heartbeat)
                continue
            }
            guard let step = waitForWork(heartbeat, until: \.appendThreadHasWork, { $0.takeSubmitted() }) else {
                continue
            }
            let batch: Finished
            let requests: [CommandRequest]
            switch step {
            case .end:
                return
            case .append(let taken) where sendsAhead:
                handler.send(handler.decide(taken))
                continue
            case .append(let taken):
                requests = taken
                batch = Finished(outcomes: handler.handle(requests), commandsDecidedAgain: handler.commandsDecidedAgain)
            case .refuse(let taken, let failure):
                requests = taken
                batch = Self.refused(requests.count, failure, decidedAgain: handler.commandsDecidedAgain)
            }
            switch rules.withLock({ $0.appended(batch, commands: requests.count) }) {
            case .handedOn(let wakes):
                wake(wakes)
            case .syncHere:
                // A failure is final all the same: the rules refuse later batches unappended.
                let failure = Self.failure(of: flusher)
                wake(rules.withLock { $0.synced(failure: failure) })
            }
        }
    }

    /// With a batch in flight: decides the batch submitted meanwhile, and the commands that
    /// join it, until the answer of the one in flight begins to arrive; then lands that one
    /// and hands it on, and sends the one decided.
    private func landAndSendNext(_ handler: CommandHandler, heartbeat: Heartbeat) {
        var decided: DecidedBatch?
        while true {
            switch rules.withLock({ $0.takeSubmittedIfAny() }) {
            case .append(let requests):
                if var batch = decided.take() {
                    handler.decide(requests, into: &batch)
                    decided = batch
                } else {
                    decided = handler.decide(requests)
                }
            case .refuse, .end:
                preconditionFailure("a log that sends ahead has no sync to fail, and the stage stops idle")
            case nil: break
            }
            guard let descriptor = handler.inFlightDescriptor else { break }
            // Up to the store's patience: then `land` asks the server to cancel.
            var patience = -1
            if let deadline = handler.inFlightDeadline {
                let left = deadline - .now
                guard left > .zero else { break }
                patience = Int(left.seconds * 1_000) + 1
            }
            // Woken by the first submission; after it, commands that join are taken every
            // `joinsEveryMilliseconds`, in chunks, rather than a wake-up for each turn of the
            // loop; and after each chunk the answer is looked for first, so that joins never
            // hold up a landing by more than a chunk.
            let deciding = decided != nil
            var items = [PollItem(fileDescriptor: descriptor)]
            if !deciding { items.append(submissions.readable) }
            let timeout = heartbeat.pollTimeout(
                PollTimeout.earliest(deciding ? Self.joinsEveryMilliseconds : -1, patience))
            // A poll that fails lands at once: `land` waits for the answer all the same.
            let ready =
                (try? ZMQPoll.wait(items, timeoutMilliseconds: timeout))
                ?? [true] + Array(repeating: false, count: items.count - 1)
            heartbeat.beat()
            if !deciding, ready[1] { submissions.drain() }
            if ready[0] { break }
        }
        let outcomes = handler.land()
        let batch = Finished(outcomes: outcomes, commandsDecidedAgain: handler.commandsDecidedAgain)
        switch rules.withLock({ $0.appended(batch, commands: outcomes.count) }) {
        case .handedOn(let wakes): wake(wakes)
        case .syncHere: preconditionFailure("a log that sends ahead has no flusher")
        }
        guard var decided else { return }
        if let last = rules.withLock({ $0.closeOpenBatch() }) { handler.decide(last, into: &decided) }
        handler.send(decided)
    }

    /// Syncs whatever batches were appended since the last sync, in one flush, and hands
    /// them on; ends after a failed sync, or once stopping with nothing left to come.
    private func serveFlushes(_ flusher: any LogFlusher, heartbeat: Heartbeat) {
        while true {
            heartbeat.beat()
            guard let step = waitForWork(heartbeat, until: \.flushThreadHasWork, { $0.takeCommitted() }) else {
                continue
            }
            if step == .end { return }
            let failure = Self.failure(of: flusher)
            wake(rules.withLock { $0.synced(failure: failure) })
        }
    }

    /// Waits until `ready` holds of the rules, then makes the transition `take` under the
    /// same hold; nil when the heartbeat's check-in interval passed first (under a watchdog).
    private func waitForWork<Step>(
        _ heartbeat: Heartbeat, until ready: (Rules) -> Bool, _ take: (inout Rules) -> Step
    ) -> Step? {
        let timeout = heartbeat.pollTimeout(-1)
        guard timeout >= 0 else { return rules.withLock(when: ready, do: take) }
        return rules.withLock(when: ready, before: .now + .milliseconds(timeout), do: take)
    }

    /// Does what a transition asked: wakes the threads waiting on the rules, the loop's poll.
    private func wake(_ wakes: Rules.Wakes) {
        if wakes.contains(.waiters) { rules.broadcast() }
        if wakes.contains(.loop) { finished.wake() }
    }

    /// Runs one sync; why it failed, or nil once what it covers is durable. A stage whose
    /// rules ask for a sync has a flusher.
    private static func failure(of flusher: (any LogFlusher)?) -> EventStoreError? {
        guard let flusher else { preconditionFailure("a sync was asked of a stage without a flusher") }
        do {
            try flusher.flush()
            return nil
        } catch {
            return error
        }
    }

    /// A batch handed back as the loop delivers it.
    private static func outcome(_ delivery: Rules.Delivery) -> Finished {
        switch delivery {
        case .durable(let batch): batch
        case .refused(let batch, let failure):
            refused(batch.outcomes.count, failure, decidedAgain: batch.commandsDecidedAgain)
        }
    }

    /// A batch of `count` commands, each refused because the log cannot be made durable.
    private static func refused(_ count: Int, _ failure: EventStoreError, decidedAgain: Int) -> Finished {
        Finished(
            outcomes: Array(repeating: .rejected(ServiceError(failure)), count: count),
            commandsDecidedAgain: decidedAgain)
    }
}

/// Keeps the handler, which is not `Sendable`, for the stage: the thread the rules gave it
/// to uses it.
private final class HandlerOwnership: @unchecked Sendable {
    let handler: CommandHandler
    init(_ handler: CommandHandler) { self.handler = handler }
}
