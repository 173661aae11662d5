/// At most `linesPerSecond` lines in each second of a monotonic clock, and a count of those
/// held back, told once the second is over: so a flood of refused handshakes costs a few
/// lines a second, never the disk. A value; its owner keeps it behind a lock.
struct LineRateLimit {
    let linesPerSecond: Int
    private var second: Int64 = .min
    private var lines = 0
    private var heldBack = 0

    init(linesPerSecond: Int) {
        self.linesPerSecond = linesPerSecond
    }

    /// Whether a line may be written at `nowSecond`, and how many lines an earlier second
    /// held back (to be reported now, once).
    mutating func admit(atSecond nowSecond: Int64) -> (write: Bool, heldBackBefore: Int) {
        let earlier = settle(atSecond: nowSecond)
        if lines < linesPerSecond {
            lines += 1
            return (true, earlier)
        }
        heldBack += 1
        return (false, earlier)
    }

    /// How many lines an earlier second held back, once that second is over (0 otherwise).
    mutating func settle(atSecond nowSecond: Int64) -> Int {
        guard nowSecond != second else { return 0 }
        let earlier = heldBack
        second = nowSecond
        lines = 0
        heldBack = 0
        return earlier
    }
}
