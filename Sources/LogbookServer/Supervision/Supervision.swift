import LogbookZMQ
import Synchronization

/// A process's dealings with its supervisor (systemd): `ready` once every socket is bound
/// and the store is open, `stopping` when a clean stop begins, and, when the supervisor runs
/// a watchdog, `WATCHDOG=1` sent by the serving loops themselves: each loop holds a
/// `Heartbeat` and checks in on every turn, and the check-in that finds every loop alive
/// sends the ping (`LoopCheckIns` has the rule). No thread pings on its own, so a wedged
/// loop stops the pings. A loop silent too long is named once in the diagnostics and in a
/// `STATUS=` line (as is its return). Every line is decided and sent under one lock, so
/// pings and status lines always fall between `READY=1` and `STOPPING=1`.
/// Without a notifier (not started by systemd) it does nothing, and heartbeats cost nothing.
public final class Supervision: Sendable {
    private let notifier: (any SupervisorNotifier)?
    private let diagnostics: Diagnostics?
    /// Nil without a watchdog.
    private let checkIns: Mutex<LoopCheckIns?>
    /// The longest a serving loop may wait between two check-ins (nil: no watchdog).
    public let checkInMilliseconds: Int?

    /// Tells `notifier` (nil: nobody); reports silent loops to `diagnostics`.
    public init(notifier: (any SupervisorNotifier)? = nil, diagnostics: Diagnostics? = nil) {
        self.notifier = notifier
        self.diagnostics = diagnostics
        let rule = notifier?.watchdogMicroseconds.map { LoopCheckIns(watchdogMicroseconds: $0) }
        checkInMilliseconds = rule?.checkInMilliseconds
        checkIns = Mutex(rule)
    }

    /// A heartbeat for one more serving loop, as checked in now (inert without a watchdog).
    /// Each serving loop takes one before it opens its start-up gate.
    public func heartbeat(for loop: String) -> Heartbeat {
        guard let checkInMilliseconds,
            let slot = checkIns.withLock({ $0?.register(loop, now: MonotonicClock.milliseconds()) })
        else { return Heartbeat() }
        return Heartbeat(supervision: self, slot: slot, checkInMilliseconds: checkInMilliseconds)
    }

    /// Every socket is bound and the store open: `READY=1`; pings may go out from now on.
    public func ready(status: String) {
        // Said under the lock, as every ping is: a loop that checks in between the two cannot
        // send WATCHDOG=1 before READY=1 is out.
        checkIns.withLock { rule in
            rule?.ready()
            notifier?.send(.ready(status: status))
        }
    }

    /// A clean stop begins: `STOPPING=1`, and no more pings.
    public func stopping(status: String) {
        // Under the lock: a ping decided before this cannot follow STOPPING=1.
        checkIns.withLock { rule in
            rule?.stopping()
            notifier?.send(.stopping(status: status))
        }
    }

    /// A loop's check-in; the one that finds every loop alive pings.
    func checkIn(_ slot: Int) {
        // Decided and sent under the lock, so that every line stays between READY=1 and
        // STOPPING=1 and in the order the rule decided it.
        checkIns.withLock { rule in
            guard let outcome = rule?.checkIn(slot, now: MonotonicClock.milliseconds()) else { return }
            if outcome.ping { notifier?.send(.watchdog) }
            for silent in outcome.silent {
                diagnostics?.warning(
                    "serving loop silent: watchdog pings withheld",
                    ["loop": silent.name, "silentMs": "\(silent.milliseconds)"])
                notifier?.send(.status("the \(silent.name) loop is silent: watchdog pings withheld"))
            }
            if let recovered = outcome.recovered {
                diagnostics?.info(
                    "serving loop checked in again", ["loop": recovered.name, "silentMs": "\(recovered.milliseconds)"])
                notifier?.send(
                    .status("serving; the \(recovered.name) loop was silent for \(recovered.milliseconds) ms"))
            }
        }
    }
}
