import CSystemd
import Glibc
import LogbookServer
import Synchronization

/// systemd's notification protocol through libsystemd (`sd_notify`, `sd_watchdog_enabled`),
/// for units with `Type=notify` and `WatchdogSec=`. Exists only when systemd (or anything
/// playing its part) set `NOTIFY_SOCKET`; libsystemd reads that and `WATCHDOG_USEC` /
/// `WATCHDOG_PID` from the process's own environment, so this does too. A message that
/// cannot be sent is reported once as a warning (and each time at debug).
final class SystemdNotifier: SupervisorNotifier {
    let watchdogMicroseconds: UInt64?
    private let diagnostics: Diagnostics
    private let failureReported = Mutex(false)

    /// Nil when the process was not started by a supervisor that listens.
    init?(diagnostics: Diagnostics) {
        guard let socket = getenv("NOTIFY_SOCKET"), socket.pointee != 0 else { return nil }
        self.diagnostics = diagnostics
        var microseconds: UInt64 = 0
        let enabled = sd_watchdog_enabled(0, &microseconds)
        if enabled < 0 {
            diagnostics.warning(
                "watchdog settings unreadable; no watchdog pings",
                ["error": String(cString: strerror(-enabled)), "WATCHDOG_USEC": Self.variable("WATCHDOG_USEC")])
        }
        watchdogMicroseconds = enabled > 0 && microseconds > 0 ? microseconds : nil
        diagnostics.info(
            "supervised by systemd",
            ["watchdogMs": watchdogMicroseconds.map { "\($0 / 1_000)" } ?? "off"])
    }

    func send(_ message: SupervisorMessage) {
        let result = sd_notify(0, message.text)
        guard result < 0 else { return }
        let fields: KeyValuePairs<String, String> = [
            "message": message.text.replacingNewlines, "error": String(cString: strerror(-result)),
        ]
        if failureReported.withLock({ reported in
            defer { reported = true }
            return !reported
        }) {
            diagnostics.warning("cannot notify systemd", fields)
        } else {
            diagnostics.debug("cannot notify systemd", fields)
        }
    }

    private static func variable(_ name: String) -> String {
        getenv(name).map { String(cString: $0) } ?? ""
    }
}

extension String {
    /// The text on one line, for a log field.
    fileprivate var replacingNewlines: String { split(separator: "\n").joined(separator: " ") }
}
