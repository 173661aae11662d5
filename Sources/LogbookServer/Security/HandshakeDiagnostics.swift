import LogbookZMQ
import Synchronization

/// What a process's ZAP handler reports, as diagnostics: each refused handshake at
/// `warning` (key, address, socket, reason), rate-limited (`LineRateLimit`) with a count of
/// the lines held back; admitted ones at `debug`.
final class HandshakeDiagnostics: ZAPObserver {
    static let linesPerSecond = 10

    private let diagnostics: Diagnostics
    private let limit = Mutex(LineRateLimit(linesPerSecond: HandshakeDiagnostics.linesPerSecond))

    init(_ diagnostics: Diagnostics) {
        self.diagnostics = diagnostics
    }

    func refused(_ refusal: ZAPRefusal) {
        let now = MonotonicClock.milliseconds() / 1000
        let (write, heldBack) = limit.withLock { $0.admit(atSecond: now) }
        reportHeldBack(heldBack)
        guard write else { return }
        diagnostics.warning(
            "handshake refused",
            [
                "key": refusal.key ?? "none", "address": refusal.address, "socket": Self.socket(refusal.domain),
                "reason": refusal.reason,
            ])
    }

    func admitted(key: String, role: ClientRole, address: String, domain: String) {
        diagnostics.debug(
            "handshake admitted",
            ["key": key, "role": role.rawValue, "address": address, "socket": Self.socket(domain)])
    }

    func quiet() {
        let now = MonotonicClock.milliseconds() / 1000
        reportHeldBack(limit.withLock { $0.settle(atSecond: now) })
    }

    private func reportHeldBack(_ count: Int) {
        guard count > 0 else { return }
        diagnostics.warning(
            "handshake refusals not logged", ["count": "\(count)", "limit": "\(Self.linesPerSecond) lines a second"])
    }

    private static func socket(_ domain: String) -> String {
        switch ZAPDomain(rawValue: domain) {
        case .feed: "feed"
        case .hints: "hints"
        case .requests, nil: "requests"
        }
    }
}
