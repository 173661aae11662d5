import Foundation
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

    /// A notifier whose every send takes a moment, as a `sendto` on a busy machine may.
    final class SlowNotifier: SupervisorNotifier {
        let watchdogMicroseconds: UInt64? = 4_000
        let sent = Mutex<[SupervisorMessage]>([])

        func send(_ message: SupervisorMessage) {
            Thread.sleep(forTimeInterval: 0.000_2)
            sent.withLock { $0.append(message) }
        }
    }

    @Test("loops checking in all the time: READY=1 is still the first line and STOPPING=1 the last")
    func pingsStayBetweenReadyAndStopping() {
        for _ in 0..<10 {
            let notifier = SlowNotifier()
            let supervision = Supervision(notifier: notifier)
            let done = Atomic<Bool>(false)
            let finished = DispatchGroup()
            for name in ["commands", "log reads"] {
                let heartbeat = supervision.heartbeat(for: name)
                finished.enter()
                Thread.detachNewThread {
                    while !done.load(ordering: .relaxed) { heartbeat.beat() }
                    finished.leave()
                }
            }
            Thread.sleep(forTimeInterval: 0.002)
            supervision.ready(status: "up")
            // Pings go out for a while (a busy machine may take longer to send the first).
            let deadline = Date().addingTimeInterval(5)
            while !notifier.sent.withLock({ $0.count(where: { $0 == .watchdog }) >= 3 }) && Date() < deadline {
                Thread.sleep(forTimeInterval: 0.001)
            }
            supervision.stopping(status: "down")
            Thread.sleep(forTimeInterval: 0.002)
            done.store(true, ordering: .relaxed)
            finished.wait()
            let sent = notifier.sent.withLock { $0 }
            #expect(sent.first == .ready(status: "up"), "\(sent.prefix(3))")
            #expect(sent.last == .stopping(status: "down"), "\(sent.suffix(3))")
            #expect(sent.count(where: { $0 == .watchdog }) >= 3)
        }
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
