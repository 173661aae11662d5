/// What a process tells the supervisor that started it (systemd's notification protocol):
/// implemented at the edge, by the composition root, with libsystemd.
public protocol SupervisorNotifier: Sendable {
    /// How often the supervisor wants a sign of life (`WatchdogSec=`, in microseconds), or
    /// nil when it watches for none.
    var watchdogMicroseconds: UInt64? { get }
    /// Sends one message; a message that cannot be sent is the notifier's to report.
    func send(_ message: SupervisorMessage)
}

/// One notification, and its text on the wire (newline-separated `KEY=value` lines).
public enum SupervisorMessage: Sendable, Equatable {
    /// Every socket is bound and the log (or the read models) open: `READY=1`.
    case ready(status: String)
    /// A line for `systemctl status`: `STATUS=…`.
    case status(String)
    /// Every serving loop checked in recently: `WATCHDOG=1`.
    case watchdog
    /// A clean stop has begun: `STOPPING=1`.
    case stopping(status: String)

    public var text: String {
        switch self {
        case .ready(let status): "READY=1\nSTATUS=\(Self.oneLine(status))"
        case .status(let status): "STATUS=\(Self.oneLine(status))"
        case .watchdog: "WATCHDOG=1"
        case .stopping(let status): "STOPPING=1\nSTATUS=\(Self.oneLine(status))"
        }
    }

    /// A status is one line: a newline in it would start a message of its own.
    private static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}
