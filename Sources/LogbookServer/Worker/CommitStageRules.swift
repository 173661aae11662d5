import LogbookApplication

/// The commit stage's rules as a value with no thread, lock or store: each event (the loop
/// submits a batch or runs one inline, a thread takes its next work, an append or a sync
/// returns, a stop) is a mutating call that returns what to do, and `CommitStage`, the
/// threaded shell, does it. `Requests` is a batch as submitted, `Batch` as appended (the
/// stage's outcomes; anything in tests).
///
/// A batch becomes durable by one of three routes, decided here alone:
/// - inline: a small batch (under `inlineFlushBelow` commands) that the command loop reads
///   while the stage is idle, on a log whose writer turns allow it, is decided, appended and
///   synced on the loop's own thread (`claimInline`, then `inlineFinished`);
/// - synced by the append thread: a small batch appended with none waiting for a sync and no
///   sync running (`appended` says `.syncHere`): nothing would overlap its sync, and it saves
///   two hand-overs (no batch can have been submitted while it was appended);
/// - synced by the flush thread: every other appended batch waits in `committed`, and the
///   flush thread takes all of them into one sync (`takeCommitted`) while the append thread
///   appends the next.
/// Without a flusher (`flushes` false) an appended batch is durable at once and goes
/// straight to the loop. On a log that sends appends ahead (`sendsAhead`: PostgreSQL) the
/// append thread holds two batches at once: one in flight, and the next, which it decides
/// meanwhile and sends once the first has landed; so the loop may submit a batch while the
/// append thread holds one, and that next batch stays open (`join`): commands the loop reads
/// until it is sent join it, up to the loop's batch limit, and are decided into it.
///
/// A failed sync is final: the batches it covered, and every one appended meanwhile, are
/// handed back refused; every batch taken later is refused without being appended
/// (`.refuse`); the flush thread ends, so its heartbeat stops.
///
/// It promises, asserted after every transition: a batch is in exactly one place from
/// `submit` until `takeDone` hands it back (submitted, held by the append thread, committed,
/// being synced, done), so `inFlight` counts them and never exceeds `maximumInFlight`; the
/// append thread holds at most `holdsAtMost` batches; one thread at a time holds the handler
/// (the append thread, or the loop while it runs a batch inline, only when the stage is idle); one sync runs at a time; nothing waits for a sync once one
/// failed. And by construction: batches come back in the order they were submitted (each
/// place is first in, first out, and a sync covers every batch appended before it); a
/// thread is told to end only once nothing it could still be given is left.
struct CommitStageRules<Requests: Collection, Batch> {
    /// What a batch handed back to the loop is.
    enum Delivery {
        /// Appended and, when the log has a flusher, synced.
        case durable(Batch)
        /// Not durable (its sync, or an earlier one, failed): every command is refused with this.
        case refused(Batch, EventStoreError)
    }

    typealias Wakes = CommitStageWakes

    /// What the append thread does next.
    enum AppendStep {
        /// Decide and append these commands, then call `appended`.
        case append(Requests)
        /// A sync has failed: build the refused batch of these commands without appending
        /// them, then call `appended` with it.
        case refuse(Requests, EventStoreError)
        /// The stage stops and nothing was submitted: the thread ends.
        case end
    }

    /// What the append thread does with the batch it just appended.
    enum AfterAppend: Equatable {
        /// Sync it on this thread, then call `synced`.
        case syncHere
        /// Nothing more: wake these.
        case handedOn(Wakes)
    }

    /// What the flush thread does next.
    enum FlushStep: Equatable {
        /// Sync the batches just taken from `committed` in one flush, then call `synced`.
        case sync
        /// A sync failed, or the stage stops with nothing appended or to come: the thread ends.
        case end
    }

    /// Which thread runs the sync in progress, and the batches it covers.
    private struct Sync {
        let byAppendThread: Bool
        let batches: [Batch]
    }

    /// Batches in the stage at most: one appended while the one before is synced and the
    /// one before that delivered.
    static var maximumInFlight: Int { 3 }

    /// A batch of fewer commands than this, with nothing to overlap its sync, is synced
    /// without a hand-over to the flush thread (by the append thread, or inline on the loop's
    /// thread): a small batch has little processor work to overlap, and the hand-over to the
    /// flush thread and back would cost it more than the overlap saves.
    static var inlineFlushBelow: Int { 64 }

    /// Appended batches are durable only once a flusher synced them.
    let flushes: Bool
    /// The loop may run a small batch inline (a flusher, and write turns to take).
    let runsInline: Bool
    /// The append thread decides the next batch while the last one's append is in flight.
    let sendsAhead: Bool

    private var submitted: Requests?
    /// Batches the append thread holds: deciding or appending them, building a refusal, or,
    /// sending ahead, one in flight and the next being decided.
    private var held = 0
    /// Sending ahead, the append thread decides a batch it has not sent, which more commands
    /// may join (`join`, then `takeSubmittedIfAny`, until `closeOpenBatch`).
    private var open = false
    /// Commands the open batch has taken.
    private var openCount = 0
    /// `submitted` holds commands joining the open batch, not a batch of their own.
    private var submittedJoinsOpen = false
    /// The command loop runs a batch inline: it holds the handler, and then syncs.
    private var runningInline = false
    /// Appended, waiting for a sync.
    private var committed: [Batch] = []
    private var sync: Sync?
    /// Durable or refused, waiting for the loop to take them.
    private var done: [Delivery] = []
    /// Submitted and not yet taken back by the loop.
    private(set) var inFlight = 0
    private var stopping = false
    /// Why a sync failed; from then on every batch is refused without being appended.
    private(set) var failure: EventStoreError?

    /// Rules for a stage whose log syncs with a flusher (`flushes`) or is durable once
    /// appended, whose loop may run small batches inline (`runsInline`, only with a flusher),
    /// and whose append thread sends appends ahead (`sendsAhead`, only without one).
    init(flushes: Bool, runsInline: Bool, sendsAhead: Bool = false) {
        precondition(flushes || !runsInline, "a batch runs inline only on a log with a flusher")
        precondition(!(flushes && sendsAhead), "appends are sent ahead only on a log durable once appended")
        self.flushes = flushes
        self.runsInline = runsInline
        self.sendsAhead = sendsAhead
    }

    /// Batches the append thread holds at most: two when it sends ahead, else one.
    var holdsAtMost: Int { sendsAhead ? 2 : 1 }

    // MARK: The command loop

    /// The append thread can take a batch now: none waits for it, it holds fewer than it
    /// may, and fewer than `maximumInFlight` are in the stage.
    var acceptsBatch: Bool {
        submitted == nil && held < holdsAtMost && !runningInline && inFlight < Self.maximumInFlight
    }

    /// No batch is in the stage, and none finished and not yet taken.
    var isIdle: Bool { inFlight == 0 }

    /// Every batch in the stage is done (`waitForFinished` waits for this).
    var allFinished: Bool { done.count == inFlight }

    /// Hands a batch to the append thread; only when `acceptsBatch`.
    mutating func submit(_ requests: Requests) -> Wakes {
        precondition(acceptsBatch, "a batch is already waiting for the append thread, or the stage is full")
        submitted = requests
        inFlight += 1
        checkInvariants()
        return .waiters
    }

    /// Whether a batch of `commands` may run inline as far as its size and the batches in the
    /// stage go: not empty, small, and none in the stage. The loop asks this of its own count
    /// of the batches it handed over (without the lock) to learn whether to deliver those
    /// done before it runs one; `claimInline` checks it again with the rest.
    static func mayRunInline(commands: Int, inFlight: Int) -> Bool {
        commands > 0 && commands < inlineFlushBelow && inFlight == 0
    }

    /// Whether the loop may run this batch inline now, and if so claims the handler for it
    /// until `inlineFinished` or `inlineDeclined`: a small batch on a log that allows it, with
    /// the stage idle (nothing in it, nothing done and not taken, no sync running), no sync
    /// failed and no stop asked.
    mutating func claimInline(commands: Int) -> Bool {
        guard runsInline, Self.mayRunInline(commands: commands, inFlight: inFlight), held == 0, !runningInline,
            sync == nil, failure == nil, !stopping
        else { return false }
        runningInline = true
        checkInvariants()
        return true
    }

    /// The inline batch did not run after all (the writer's lock was taken): the handler is
    /// free again, and the batch goes to the stage.
    mutating func inlineDeclined() -> Wakes {
        precondition(runningInline, "no inline batch was claimed")
        runningInline = false
        checkInvariants()
        // Only a stopping flush thread waits for the handler to be free.
        return stopping ? .waiters : []
    }

    /// The inline batch was appended and its sync returned (`failure` when it failed): nil
    /// when the batch is durable, else why each of its commands is refused.
    mutating func inlineFinished(syncFailure: EventStoreError?) -> (refusal: EventStoreError?, wakes: Wakes) {
        precondition(runningInline, "no inline batch was claimed")
        runningInline = false
        if let syncFailure { failure = syncFailure }
        checkInvariants()
        // Only the flush thread can wait on what changed (a failure ends it; a stop that came
        // meanwhile finds the handler free): waking both threads after every inline batch
        // would cost a lone command two context switches for nothing.
        return (syncFailure, syncFailure != nil || stopping ? .waiters : [])
    }

    /// The batches done since the last call, in the order they were submitted; each once.
    mutating func takeDone() -> [Delivery] {
        let taken = done
        done = []
        inFlight -= taken.count
        checkInvariants()
        return taken
    }

    /// Lets the batches in hand finish, then ends the threads.
    mutating func stop() -> Wakes {
        stopping = true
        checkInvariants()
        return .waiters
    }

    // MARK: The append thread

    /// Whether the append thread has something to do (it waits until this holds).
    var appendThreadHasWork: Bool { submitted != nil || stopping }

    /// The append thread's next step; only when `appendThreadHasWork`. A batch submitted
    /// before a stop is still taken.
    mutating func takeSubmitted() -> AppendStep {
        precondition(appendThreadHasWork && held < holdsAtMost, "the append thread has nothing to take")
        guard let requests = submitted else {
            precondition(held == 0, "the append thread ends while it holds a batch")
            return .end
        }
        submitted = nil
        held += 1
        checkInvariants()
        if let failure { return .refuse(requests, failure) }
        return .append(requests)
    }

    /// For an append thread that sends ahead and holds a batch in flight, without waiting:
    /// the batch submitted, which becomes its open batch, or the commands that joined the
    /// open batch; nil when there are none.
    mutating func takeSubmittedIfAny() -> AppendStep? {
        precondition(sendsAhead && held >= 1, "only an append thread sending ahead takes a second batch")
        guard let requests = submitted else { return nil }
        if submittedJoinsOpen {
            submitted = nil
            submittedJoinsOpen = false
            openCount += requests.count
            checkInvariants()
            return .append(requests)
        }
        let step = takeSubmitted()
        open = true
        openCount = requests.count
        checkInvariants()
        return step
    }

    /// The append thread is about to send its open batch: it takes no more commands, and
    /// these, which joined it last, are decided into it first.
    mutating func closeOpenBatch() -> Requests? {
        guard open else { return nil }
        open = false
        openCount = 0
        defer { checkInvariants() }
        guard submittedJoinsOpen, let requests = submitted else { return nil }
        submitted = nil
        submittedJoinsOpen = false
        return requests
    }

    /// The append thread appended (or refused) the batch of `commands` it took: where it goes.
    mutating func appended(_ batch: Batch, commands: Int) -> AfterAppend {
        precondition(held > 0, "the append thread held no batch")
        held -= 1
        defer { checkInvariants() }
        if let failure {
            // Appended while a sync failed (or refused after): it cannot be made durable.
            done.append(.refused(batch, failure))
        } else if !flushes {
            done.append(.durable(batch))
        } else if commands < Self.inlineFlushBelow, committed.isEmpty, sync == nil {
            // A small batch with nothing to overlap its sync: synced here, two hand-overs fewer.
            sync = Sync(byAppendThread: true, batches: [batch])
            return .syncHere
        } else {
            committed.append(batch)
        }
        // The loop learns the append thread is free (with a flusher) or a batch is done.
        return .handedOn([.waiters, .loop])
    }

    // MARK: The flush thread

    /// Whether the flush thread has something to do (it waits until this holds): batches to
    /// sync and no sync running, a failed sync, or a stop with nothing left to come.
    var flushThreadHasWork: Bool {
        (!committed.isEmpty && sync == nil) || failure != nil || (committed.isEmpty && quiescent)
    }

    /// The flush thread's next step; only when `flushThreadHasWork`. `.sync` takes every
    /// committed batch into one sync.
    mutating func takeCommitted() -> FlushStep {
        precondition(flushes && flushThreadHasWork, "the flush thread has nothing to take")
        if failure != nil || committed.isEmpty { return .end }
        assert(sync == nil, "a second sync while one runs")
        sync = Sync(byAppendThread: false, batches: committed)
        committed = []
        checkInvariants()
        return .sync
    }

    // MARK: Either thread that syncs

    /// The sync that the append thread or the flush thread ran returned (`failure` when it
    /// failed). The batches it covered are done: durable, or on a failure refused, with every
    /// batch appended meanwhile; a failure is final.
    mutating func synced(failure syncFailure: EventStoreError?) -> Wakes {
        guard let finished = sync else { preconditionFailure("no sync was running") }
        sync = nil
        if let syncFailure {
            failure = syncFailure
            done += (finished.batches + committed).map { .refused($0, syncFailure) }
            committed = []
        } else {
            done += finished.batches.map { .durable($0) }
        }
        checkInvariants()
        return [.waiters, .loop]
    }

    // MARK: Invariants

    /// Stopping, and no batch submitted, held, appended-and-syncing or inline: nothing more
    /// can reach `committed`.
    private var quiescent: Bool { stopping && submitted == nil && held == 0 && !runningInline && sync == nil }

    /// The promises of the type's documentation; a violation is a bug in the stage.
    private func checkInvariants() {
        assert(
            inFlight
                == (submitted == nil || submittedJoinsOpen ? 0 : 1) + held + committed.count
                    + (sync?.batches.count ?? 0) + done.count,
            "a batch in the stage is in no place, or in two")
        assert(!open || (sendsAhead && held >= 1), "an open batch the append thread does not hold")
        assert(!submittedJoinsOpen || (open && submitted != nil), "commands join a batch that is not open")
        assert(inFlight <= Self.maximumInFlight, "more batches in the stage than it holds")
        assert(held <= holdsAtMost, "the append thread holds more batches than it may")
        assert(
            submitted == nil || submittedJoinsOpen || held < holdsAtMost,
            "a batch submitted while the append thread held all it may")
        assert(flushes || (committed.isEmpty && sync == nil), "a sync without a flusher")
        assert(failure == nil || committed.isEmpty, "a batch waits for a sync after a sync failed")
        assert(failure == nil || sync == nil, "a sync runs after a sync failed")
        assert(!runningInline || (inFlight == 0 && held == 0 && sync == nil), "an inline batch beside the stage's")
        assert(!(sync?.byAppendThread ?? false) || held == 0, "the append thread appends while it syncs")
    }
}

extension CommitStageRules where Requests: RangeReplaceableCollection {
    /// Adds `requests` to the batch the loop handed over last, when the append thread sends
    /// ahead and that batch is still to be taken or open (taken and not yet sent), and it
    /// would hold no more than `limit` commands: true when it did (wake the append thread:
    /// it decides them while the batch before is in flight). So the batch decided while one
    /// is in flight holds every command read until it is sent, not only those read before
    /// the append thread took it.
    mutating func join(_ requests: Requests, upTo limit: Int) -> Bool {
        guard sendsAhead else { return false }
        if let waiting = submitted {
            guard (submittedJoinsOpen ? openCount : 0) + waiting.count + requests.count <= limit else { return false }
            submitted = waiting + requests
        } else {
            guard open, openCount + requests.count <= limit else { return false }
            submitted = requests
            submittedJoinsOpen = true
        }
        checkInvariants()
        return true
    }
}

extension CommitStageRules.Delivery: Equatable where Batch: Equatable {}
extension CommitStageRules.AppendStep: Equatable where Requests: Equatable {}

/// Whom the commit stage wakes after a transition of its rules, once its lock is released.
struct CommitStageWakes: OptionSet, Equatable {
    let rawValue: UInt8
    /// The threads waiting on the stage's condition (`appendThreadHasWork`,
    /// `flushThreadHasWork`, `allFinished`).
    static let waiters = CommitStageWakes(rawValue: 1)
    /// The command loop's poll, through the stage's pipe: a batch is done, or the append
    /// thread is free for the next one.
    static let loop = CommitStageWakes(rawValue: 2)
}
