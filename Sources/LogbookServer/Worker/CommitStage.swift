import Foundation
import LogbookApplication
import LogbookZMQ

/// The worker's commit stages, between the command loop's reading and its replies: an
/// append thread that decides and appends one batch at a time (`CommandHandler`: decide,
/// one group commit), and, for a store that commits before its sync (a `LogFlusher`: SQLite
/// with deferred syncs), a flush thread that makes the committed batches durable, all of
/// those waiting in one sync, while the append thread already appends the next batch. So
/// one batch's sync overlaps the next one's processor work, and the command loop's thread,
/// which owns every socket, reads the next requests and delivers finished batches
/// meanwhile. A small batch (under `inlineFlushBelow` commands) with no batch waiting and
/// no flush running is synced by the append thread itself: nothing would overlap it, and a
/// lone command saves two thread hand-overs. Without a flusher each append is durable when
/// it returns (`synchronous=FULL`, PostgreSQL) and a batch is finished as soon as it is
/// appended. A small batch the command loop reads while the stage is idle it may run to
/// completion on its own thread (`runInline`), with no hand-over at all, when the writer's
/// write lock is free at that moment (`WriteTurns`): the loop never waits for another
/// connection's lock.
///
/// Batches come back through `takeFinished()` in the order they were submitted, each only
/// once durable; `finished` (a pipe in the loop's poll) becomes readable when one is ready.
/// If a flush fails, every command of the batches it covered is refused as `unavailable`
/// (they may or may not survive a power cut: their clients send them again, with their ids),
/// and so is every later one, without being appended (after a failed sync nothing more can
/// be said durable: `LogFlusher`); the flush thread ends, so its heartbeat stops and a
/// supervisor's watchdog restarts the worker.
///
/// At most `maximumInFlight` batches are in the stage at once (one being appended, the
/// others waiting for or in a flush, or durable and not yet taken): while a sync is slow,
/// requests wait in libzmq's bounded queue, not in this process.
///
/// The handler (and through it the store's connection) is used by one thread at a time:
/// the append thread, or the command loop's while it runs a batch inline (`runInline`, the
/// stage idle); the flusher likewise by one at a time. Each thread checks in with
/// its own heartbeat between batches and while idle, so a commit or a sync that hangs stops
/// the supervisor's watchdog pings. `stop()` lets the batches in hand finish and joins both.
/// `submit`, `runInline`, `takeFinished` and `stop` are called from one thread (the command
/// loop's): an inline batch never overlaps a submission, and wakes the stage's threads only
/// when they have something to see (a failed flush, a stop).
final class CommitStage: @unchecked Sendable {
    /// A batch's outcomes, in request order, and the handler's count of commands decided again.
    struct Finished: Sendable, Equatable {
        var outcomes: [CommandOutcome]
        var commandsDecidedAgain: Int
    }

    /// Batches in the stage at most: one appended while the one before is flushed and the
    /// one before that delivered.
    static let maximumInFlight = 3

    /// A batch of fewer commands than this, with no batch waiting to be appended and no flush
    /// running, is synced by the append thread itself. A small batch's sync has little
    /// processor work to overlap (64 commands are ~3.5 ms of it), and the hand-over to the
    /// flush thread and back costs a lone command ~80 µs of processor time; at moderate
    /// loads the pipeline of small batches only multiplied syncs.
    static let inlineFlushBelow = 64

    /// Readable once a submitted batch finished (drained by `takeFinished()`), and once the
    /// append thread is free for the next batch (`acceptsBatch`).
    let finished: WakeUpPipe
    /// Set once, in `init`; joined by `stop()`.
    private var threads: [OwnedThread] = []
    /// The handler, used by one thread at a time: the one that set `appending`.
    private let owned: HandlerOwnership
    private let flusher: (any LogFlusher)?
    private let turns: (any WriteTurns)?
    // Everything below `condition` is read and written only with `condition` locked.
    private let condition = NSCondition()
    /// Submitted, not yet taken by the append thread.
    private var submitted: [CommandRequest]?
    /// The append thread is deciding and appending a batch.
    private var appending = false
    /// Appended, waiting for a flush (only with a flusher).
    private var committed: [Finished] = []
    /// Durable, waiting for the command loop.
    private var done: [Finished] = []
    /// Submitted and not yet taken back by the command loop.
    private var inFlight = 0
    private var stopping = false
    /// Why a flush failed; from then on every batch is refused without being appended.
    private var flushFailure: EventStoreError?
    /// A flush runs (on the flush thread, or a small batch's on the append thread).
    private var flushing = false

    /// Starts the append thread, which owns `handler` from now on, and with `flusher` the
    /// flush thread, which checks in with `flushHeartbeat`. With `flusher` and `turns` (the
    /// write turns of the handler's store) `runInline` may run a batch on its caller's thread.
    init(
        handler: CommandHandler, flusher: (any LogFlusher)? = nil, turns: (any WriteTurns)? = nil,
        heartbeat: Heartbeat, flushHeartbeat: Heartbeat = Heartbeat()
    ) throws(ZMQError) {
        finished = try WakeUpPipe()
        owned = HandlerOwnership(handler)
        self.flusher = flusher
        self.turns = turns
        threads.append(
            OwnedThread(name: "logbook-commits") { [self] in
                serveAppends(heartbeat: heartbeat)
            })
        if let flusher {
            threads.append(
                OwnedThread(name: "logbook-flushes") { [self] in serveFlushes(flusher, heartbeat: flushHeartbeat) })
        }
    }

    /// The append thread can take a batch now: none waits for it, none is in its hands, and
    /// fewer than `maximumInFlight` are in the stage.
    var acceptsBatch: Bool {
        condition.lock()
        defer { condition.unlock() }
        return submitted == nil && !appending && inFlight < Self.maximumInFlight
    }

    /// No batch is in the stage, and none finished and not yet taken.
    var isIdle: Bool {
        condition.lock()
        defer { condition.unlock() }
        return inFlight == 0
    }

    /// Decides, appends and syncs a small batch (under `inlineFlushBelow` commands) on the
    /// caller's thread when the stage is idle (nothing in it, nothing finished and not taken,
    /// no flush failed) and the writer's lock is free now (`WriteTurns.takeTurnIfFree`). A
    /// lone command at a quiet moment then costs no hand-over to the append thread and back
    /// (BENCHMARKS.md, issue 13, stop 21). Only on a log with a flusher and turns (SQLite's
    /// deferred syncs), whose append is local and short and never waits for another
    /// connection: a held lock sends the batch to the stage, whose append waits for it while
    /// the caller (the command loop) answers `Status`; a second round of deciding (after a
    /// conflict) that finds the lock taken meanwhile refuses its commands as `unavailable`
    /// (busy) rather than wait, and their clients send them again. The caller does wait for
    /// the sync; one that hangs stops its heartbeat as it would the flush thread's. Nil when
    /// it does not run: submit the batch then. Its outcomes are returned, not passed through
    /// `takeFinished()`.
    func runInline(_ requests: [CommandRequest]) -> Finished? {
        guard let flusher, let turns, requests.count < Self.inlineFlushBelow else { return nil }
        condition.lock()
        guard inFlight == 0, submitted == nil, !appending, !flushing, flushFailure == nil, !stopping else {
            condition.unlock()
            return nil
        }
        // The claim on the handler: the append thread takes none while `appending` holds.
        appending = true
        condition.unlock()
        // Any failure to take the turn is met again, and reported, by the stage's own append.
        guard (try? turns.takeTurnIfFree()) == true else {
            condition.lock()
            appending = false
            // A stop that came meanwhile: the flush thread waits for `appending` to clear.
            if stopping { condition.broadcast() }
            condition.unlock()
            return nil
        }
        let handler = owned.handler
        var batch = Finished(outcomes: handler.handle(requests), commandsDecidedAgain: handler.commandsDecidedAgain)
        // A batch that appended nothing (every command refused before its record) left the turn open.
        turns.endTurn()
        condition.lock()
        appending = false
        flushing = true
        condition.unlock()
        let failure = Self.failure(of: flusher)
        condition.lock()
        flushing = false
        if let failure {
            // Final, as on the flush thread: every later batch is refused unappended, and the
            // flush thread, woken, ends.
            flushFailure = failure
            batch = Self.refused(batch.outcomes.count, failure, decidedAgain: batch.commandsDecidedAgain)
        }
        // Only the flush thread's wait can hang on what this changed (a failure, or the end of
        // a stop that came meanwhile); waking both threads after every inline batch would
        // cost a lone command two context switches for nothing.
        if failure != nil || stopping { condition.broadcast() }
        condition.unlock()
        return batch
    }

    /// Hands a batch to the append thread; call only when `acceptsBatch`.
    func submit(_ requests: [CommandRequest]) {
        condition.lock()
        precondition(
            submitted == nil && !appending && inFlight < Self.maximumInFlight,
            "a batch is already waiting for the append thread, or the stage is full")
        submitted = requests
        inFlight += 1
        condition.broadcast()
        condition.unlock()
    }

    /// The batches finished since the last call, in the order they were submitted; each
    /// comes back once.
    func takeFinished() -> [Finished] {
        finished.drain()
        condition.lock()
        defer { condition.unlock() }
        return takeDone()
    }

    /// Waits until every batch in the stage finished and returns those not yet taken.
    func waitForFinished() -> [Finished] {
        condition.lock()
        defer { condition.unlock() }
        while inFlight > done.count { condition.wait() }
        return takeDone()
    }

    /// Lets the batches in hand finish (their outcomes stay for `waitForFinished`), then ends
    /// the threads and waits for them. Safe to call more than once.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
        for thread in threads { thread.join() }
    }

    /// `done`, emptied; `condition` is locked.
    private func takeDone() -> [Finished] {
        let taken = done
        done = []
        inFlight -= taken.count
        return taken
    }

    private func serveAppends(heartbeat: Heartbeat) {
        let handler = owned.handler
        let flushes = flusher != nil
        while true {
            heartbeat.beat()
            guard let requests = nextBatch(heartbeat) else {
                if isStopping { return }
                continue
            }
            let batch: Finished
            if let failure = currentFlushFailure {
                batch = Self.refused(requests.count, failure, decidedAgain: handler.commandsDecidedAgain)
            } else {
                batch = Finished(outcomes: handler.handle(requests), commandsDecidedAgain: handler.commandsDecidedAgain)
            }
            condition.lock()
            appending = false
            if let failure = flushFailure, flushes {
                // The flush thread has ended: this batch cannot be made durable.
                done.append(Self.refused(batch.outcomes.count, failure, decidedAgain: batch.commandsDecidedAgain))
            } else if let flusher, requests.count < Self.inlineFlushBelow, submitted == nil, committed.isEmpty,
                !flushing
            {
                // A small batch with nothing to overlap: synced here, one hand-over fewer.
                flushing = true
                condition.unlock()
                // A failure is final all the same: later batches are refused above.
                _ = flushAndHandOn([batch], flusher)
                continue
            } else if flushes {
                committed.append(batch)
            } else {
                done.append(batch)
            }
            condition.broadcast()
            condition.unlock()
            // With a flusher too: the loop then hands over the batch it has been reading meanwhile.
            finished.wake()
        }
    }

    /// The submitted batch, waiting for one at most the heartbeat's check-in interval; nil
    /// when that passed or the stage is stopping with nothing submitted.
    private func nextBatch(_ heartbeat: Heartbeat) -> [CommandRequest]? {
        condition.lock()
        defer { condition.unlock() }
        waitUntil(heartbeat) { submitted != nil || stopping }
        guard let requests = submitted else { return nil }
        submitted = nil
        appending = true
        return requests
    }

    /// Syncs whatever batches were appended since the last sync, in one flush, and hands
    /// them on; ends once stopping with no batch appended or being appended.
    private func serveFlushes(_ flusher: any LogFlusher, heartbeat: Heartbeat) {
        while true {
            heartbeat.beat()
            condition.lock()
            let idle = { self.stopping && self.submitted == nil && !self.appending && !self.flushing }
            waitUntil(heartbeat) { (!committed.isEmpty && !flushing) || flushFailure != nil || idle() }
            // After a failed flush (here or the append thread's) this thread ends: its heartbeat stops.
            let ending = flushFailure != nil || (committed.isEmpty && idle())
            let batches = flushing || ending ? [] : committed
            if !batches.isEmpty {
                committed = []
                flushing = true
            }
            condition.unlock()
            if ending { return }
            guard !batches.isEmpty else { continue }
            if !flushAndHandOn(batches, flusher) { return }
        }
    }

    /// Syncs `batches` (appended, in order, `flushing` set by the caller) and hands them to
    /// the loop; false when the flush failed, which is final: they, and whatever was appended
    /// meanwhile, are refused.
    private func flushAndHandOn(_ batches: [Finished], _ flusher: any LogFlusher) -> Bool {
        let failure = Self.failure(of: flusher)
        condition.lock()
        flushing = false
        var batches = batches
        if let failure {
            flushFailure = failure
            batches += committed
            committed = []
            batches = batches.map { Self.refused($0.outcomes.count, failure, decidedAgain: $0.commandsDecidedAgain) }
        }
        done.append(contentsOf: batches)
        condition.broadcast()
        condition.unlock()
        finished.wake()
        return failure == nil
    }

    /// Runs one flush; why it failed, or nil once what it covers is durable.
    private static func failure(of flusher: any LogFlusher) -> EventStoreError? {
        do {
            try flusher.flush()
            return nil
        } catch {
            return error
        }
    }

    /// A batch of `count` commands, each refused because the log cannot be made durable.
    private static func refused(_ count: Int, _ failure: EventStoreError, decidedAgain: Int) -> Finished {
        Finished(
            outcomes: Array(repeating: .rejected(ServiceError(failure)), count: count),
            commandsDecidedAgain: decidedAgain)
    }

    private var currentFlushFailure: EventStoreError? {
        condition.lock()
        defer { condition.unlock() }
        return flushFailure
    }

    /// Waits on `condition` (locked) until `ready` holds, or for at most the heartbeat's
    /// check-in interval under a watchdog.
    private func waitUntil(_ heartbeat: Heartbeat, _ ready: () -> Bool) {
        let timeout = heartbeat.pollTimeout(-1)
        // Foundation's `wait(until: .distantFuture)` traps: without a watchdog, wait unbounded.
        let deadline = timeout < 0 ? nil : Date(timeIntervalSinceNow: Double(timeout) / 1_000)
        while !ready() {
            if let deadline {
                if !condition.wait(until: deadline) { return }
            } else {
                condition.wait()
            }
        }
    }

    private var isStopping: Bool {
        condition.lock()
        defer { condition.unlock() }
        return stopping
    }
}

/// Keeps the handler, which is not `Sendable`, for the stage: the thread that claims it
/// (`appending`) uses it.
private final class HandlerOwnership: @unchecked Sendable {
    let handler: CommandHandler
    init(_ handler: CommandHandler) { self.handler = handler }
}
