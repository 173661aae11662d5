/// One serving loop's check-ins with its process's `Supervision`: `beat()` on every turn,
/// and `pollTimeout` to bound each wait so an idle loop still checks in. The default one is
/// inert (no supervisor watchdog): it changes no timeout.
public struct Heartbeat: Sendable {
    private let supervision: Supervision?
    private let slot: Int
    private let checkInMilliseconds: Int

    /// An inert heartbeat.
    public init() {
        supervision = nil
        slot = 0
        checkInMilliseconds = -1
    }

    init(supervision: Supervision, slot: Int, checkInMilliseconds: Int) {
        self.supervision = supervision
        self.slot = slot
        self.checkInMilliseconds = checkInMilliseconds
    }

    /// This loop is alive now.
    public func beat() { supervision?.checkIn(slot) }

    /// `milliseconds` (-1: forever), shortened to the check-in interval under a watchdog.
    public func pollTimeout(_ milliseconds: Int) -> Int {
        guard checkInMilliseconds >= 0 else { return milliseconds }
        return milliseconds < 0 ? checkInMilliseconds : min(milliseconds, checkInMilliseconds)
    }
}
