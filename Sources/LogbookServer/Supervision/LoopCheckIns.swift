/// The watchdog's rule, as a value: which serving loops a process has, when each last
/// checked in, and whether a `WATCHDOG=1` may go out now. A ping goes out only after the
/// process said it is ready and before it said it is stopping, at most once every
/// `spacingMilliseconds`, and only when every loop checked in within `windowMilliseconds`:
/// one wedged loop stops the pings, and the supervisor restarts the process.
///
/// For a watchdog interval W the supervisor kills after W without a ping; Logbook's loops
/// wake at least every W/4 (`checkInMilliseconds`), a loop counts as alive for W/2 after its
/// last check-in, and pings are W/4 apart: a loop busy with one piece of work for longer
/// than about W/2 is taken for wedged.
struct LoopCheckIns: Sendable {
    let windowMilliseconds: Int64
    let spacingMilliseconds: Int64
    /// The longest a loop waits between two check-ins when it has nothing to do.
    let checkInMilliseconds: Int
    private(set) var names: [String] = []
    private var lastCheckIn: [Int64] = []
    private var lastPing: Int64?
    private var reportedSilent: Set<Int> = []
    private var isReady = false
    private var isStopping = false

    /// What one check-in decided.
    struct Outcome {
        var ping = false
        /// Loops found silent for longer than the window (each reported once per silence).
        var silent: [(name: String, milliseconds: Int64)] = []
        /// The loop that checked in, if it had been reported silent, and for how long it was.
        var recovered: (name: String, milliseconds: Int64)?
    }

    init(watchdogMicroseconds: UInt64) {
        let interval = Int64(clamping: watchdogMicroseconds / 1_000)
        windowMilliseconds = max(2, interval / 2)
        spacingMilliseconds = max(1, interval / 4)
        checkInMilliseconds = Int(max(1, interval / 4))
    }

    /// Adds a loop, as checked in now; returns its slot.
    mutating func register(_ name: String, now: Int64) -> Int {
        names.append(name)
        lastCheckIn.append(now)
        return names.count - 1
    }

    /// From now on pings may go out.
    mutating func ready() { isReady = true }

    /// From now on no ping goes out.
    mutating func stopping() { isStopping = true }

    /// Records that loop `slot` is alive now, and decides whether to ping.
    mutating func checkIn(_ slot: Int, now: Int64) -> Outcome {
        var outcome = Outcome()
        let previous = lastCheckIn[slot]
        lastCheckIn[slot] = now
        // Before READY=1 the supervisor runs no watchdog: a loop slow to start (a busy machine,
        // a long catch-up) is nothing to withhold or report, and no line may precede READY=1.
        // After STOPPING=1 the loops wind down one by one: their silence is no news either.
        guard isReady, !isStopping else { return outcome }
        if reportedSilent.remove(slot) != nil { outcome.recovered = (names[slot], now - previous) }
        var everyLoopAlive = true
        for (index, last) in lastCheckIn.enumerated() where now - last > windowMilliseconds {
            everyLoopAlive = false
            if reportedSilent.insert(index).inserted { outcome.silent.append((names[index], now - last)) }
        }
        guard everyLoopAlive else { return outcome }
        if let lastPing, now - lastPing < spacingMilliseconds { return outcome }
        lastPing = now
        outcome.ping = true
        return outcome
    }
}
