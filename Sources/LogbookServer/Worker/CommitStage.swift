import Foundation
import LogbookApplication
import LogbookZMQ

/// The second stage of the worker's command pipeline: a thread of its own that decides and
/// appends one batch at a time (`CommandHandler`: decide, one group commit, its fsync), while
/// the command loop's thread, which owns every socket, reads and parses the next requests
/// and writes and sends the previous batch's replies and feed messages. So the flush of one
/// batch overlaps the network work of the batches around it, and the two halves of the work
/// run on two processors.
///
/// It holds at most one batch: `submit` is for when `isIdle`; the batch's outcomes come back
/// through `takeFinished()`, and `finished` (a pipe in the loop's poll) becomes readable when
/// they are ready. The handler (and through it the store's connection) is used only on the
/// stage's thread once the stage is made. Its thread checks in with `heartbeat` between
/// batches and while idle, so a commit that hangs (a lock another writer holds) stops the
/// supervisor's watchdog pings. `stop()` lets the batch in hand finish and joins the thread.
final class CommitStage: @unchecked Sendable {
    /// A batch's outcomes, in request order, and the handler's count of commands decided again.
    struct Finished: Sendable {
        var outcomes: [CommandOutcome]
        var commandsDecidedAgain: Int
    }

    /// Readable once a submitted batch finished (drained by `takeFinished()`).
    let finished: WakeUpPipe
    /// Set once, in `init`; joined by `stop()`.
    private var thread: OwnedThread?
    // Everything below `condition` is read and written only with `condition` locked.
    private let condition = NSCondition()
    private var submitted: [CommandRequest]?
    private var done: Finished?
    private var busy = false
    private var stopping = false

    /// Starts the stage's thread, which owns `handler` from now on.
    init(handler: CommandHandler, heartbeat: Heartbeat) throws(ZMQError) {
        finished = try WakeUpPipe()
        let owned = HandlerOwnership(handler)
        thread = OwnedThread(name: "logbook-commits") { [self] in
            serve(owned.handler, heartbeat: heartbeat)
        }
    }

    /// No batch is in the stage, and none finished and not yet taken.
    var isIdle: Bool {
        condition.lock()
        defer { condition.unlock() }
        return !busy
    }

    /// Hands a batch to the stage; call only when `isIdle`.
    func submit(_ requests: [CommandRequest]) {
        condition.lock()
        precondition(!busy, "a batch is already in the commit stage")
        submitted = requests
        busy = true
        condition.broadcast()
        condition.unlock()
    }

    /// The finished batch's outcomes, once; nil while it is still being committed (or when
    /// none was submitted). After it, the stage is idle.
    func takeFinished() -> Finished? {
        finished.drain()
        condition.lock()
        defer { condition.unlock() }
        guard let taken = done else { return nil }
        done = nil
        busy = false
        return taken
    }

    /// Waits until the batch in the stage (if any) finished and returns its outcomes.
    func waitForFinished() -> Finished? {
        condition.lock()
        defer { condition.unlock() }
        while busy && done == nil { condition.wait() }
        guard let taken = done else { return nil }
        done = nil
        busy = false
        return taken
    }

    /// Lets the batch in hand finish (its outcomes stay for `waitForFinished`), then ends the
    /// thread and waits for it. Safe to call more than once.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
        thread?.join()
    }

    private func serve(_ handler: CommandHandler, heartbeat: Heartbeat) {
        while true {
            heartbeat.beat()
            guard let requests = nextBatch(heartbeat) else {
                if isStopping { return }
                continue
            }
            let outcomes = handler.handle(requests)
            condition.lock()
            done = Finished(outcomes: outcomes, commandsDecidedAgain: handler.commandsDecidedAgain)
            condition.broadcast()
            condition.unlock()
            finished.wake()
        }
    }

    /// The submitted batch, waiting for one at most the heartbeat's check-in interval; nil
    /// when that passed or the stage is stopping with nothing submitted.
    private func nextBatch(_ heartbeat: Heartbeat) -> [CommandRequest]? {
        condition.lock()
        defer { condition.unlock() }
        let timeout = heartbeat.pollTimeout(-1)
        // Foundation's `wait(until: .distantFuture)` traps: without a watchdog, wait unbounded.
        let deadline = timeout < 0 ? nil : Date(timeIntervalSinceNow: Double(timeout) / 1_000)
        while submitted == nil && !stopping {
            if let deadline {
                if !condition.wait(until: deadline) { break }
            } else {
                condition.wait()
            }
        }
        defer { submitted = nil }
        return submitted
    }

    private var isStopping: Bool {
        condition.lock()
        defer { condition.unlock() }
        return stopping
    }
}

/// Moves the handler, which is not `Sendable`, to the stage's thread: nothing else keeps it.
private final class HandlerOwnership: @unchecked Sendable {
    let handler: CommandHandler
    init(_ handler: CommandHandler) { self.handler = handler }
}
