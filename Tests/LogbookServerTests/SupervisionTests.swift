import LogbookApplication
import LogbookServer
import Synchronization
import Testing

/// `Supervision` with a recording notifier: what reaches the supervisor, and that without a
/// watchdog the heartbeats change nothing.
@Suite("Supervision: what a process tells systemd")
struct SupervisionTests {
    final class RecordingNotifier: SupervisorNotifier {
        let watchdogMicroseconds: UInt64?
        let sent = Mutex<[SupervisorMessage]>([])

        init(watchdogMicroseconds: UInt64?) { self.watchdogMicroseconds = watchdogMicroseconds }

        func send(_ message: SupervisorMessage) { sent.withLock { $0.append(message) } }
    }

    @Test("messages are the protocol's lines; a status stays on one line")
    func messageText() {
        #expect(SupervisorMessage.ready(status: "serving\non two lines").text == "READY=1\nSTATUS=serving on two lines")
        #expect(SupervisorMessage.watchdog.text == "WATCHDOG=1")
        #expect(
            SupervisorMessage.stopping(status: "stopping on SIGTERM").text == "STOPPING=1\nSTATUS=stopping on SIGTERM")
    }

    @Test("without a watchdog: ready and stopping go out, heartbeats send nothing and bound no wait")
    func withoutWatchdog() {
        let notifier = RecordingNotifier(watchdogMicroseconds: nil)
        let supervision = Supervision(notifier: notifier)
        let heartbeat = supervision.heartbeat(for: "commands")
        #expect(supervision.checkInMilliseconds == nil)
        #expect(heartbeat.pollTimeout(-1) == -1)
        #expect(heartbeat.pollTimeout(1_000) == 1_000)
        supervision.ready(status: "up")
        heartbeat.beat()
        supervision.stopping(status: "down")
        #expect(notifier.sent.withLock { $0 } == [.ready(status: "up"), .stopping(status: "down")])
    }

    @Test("with a watchdog: waits are bounded, and the loops' check-ins ping after ready")
    func withWatchdog() {
        let notifier = RecordingNotifier(watchdogMicroseconds: 60_000_000)
        let supervision = Supervision(notifier: notifier)
        let commands = supervision.heartbeat(for: "commands")
        let reads = supervision.heartbeat(for: "log reads")
        #expect(commands.pollTimeout(-1) == 15_000)
        #expect(commands.pollTimeout(100) == 100)
        commands.beat()
        #expect(notifier.sent.withLock { $0 }.isEmpty, "no ping before READY=1")
        supervision.ready(status: "up")
        reads.beat()
        #expect(notifier.sent.withLock { $0 } == [.ready(status: "up"), .watchdog])
    }

    @Test("no notifier: nothing at all")
    func unsupervised() {
        let supervision = Supervision()
        let heartbeat = supervision.heartbeat(for: "commands")
        #expect(heartbeat.pollTimeout(-1) == -1)
        supervision.ready(status: "up")
        heartbeat.beat()
    }
}
