import LogbookApplication
import LogbookFeed
import LogbookJSON
import LogbookWire
import LogbookZMQ
import Synchronization

/// A raw SUB socket on the worker's feed, on a thread of its own, keeping every message
/// exactly as it came (`[topic][envelope]`).
final class RawFeedRecorder: Sendable {
    private let messages: Shared<[[[UInt8]]]>
    private let failure: Shared<String?>
    private let stopFlag: Stop
    private let thread: OwnedThread

    init(feed: String, prefixes: [String] = [""]) {
        let messages = Shared<[[[UInt8]]]>([])
        let failure = Shared<String?>(nil)
        let stopping = Stop()
        self.messages = messages
        self.failure = failure
        stopFlag = stopping
        thread = OwnedThread(name: "e2e-raw-feed") {
            do {
                let context = try ZMQContext()
                let socket = try ZMQSocket(context, .subscriber)
                for prefix in prefixes { try socket.subscribe(prefix) }
                try socket.connect(feed)
                while !stopping.isSet {
                    guard try ZMQPoll.wait([socket.readable], timeoutMilliseconds: 20)[0] else { continue }
                    while let frames = try socket.receive(wait: false) { messages.update { $0.append(frames) } }
                }
            } catch {
                failure.update { $0 = "\(error)" }
            }
        }
    }

    /// Everything received so far.
    var received: [[[UInt8]]] { messages.value }

    /// Why the recorder's thread stopped early, if it did.
    var problem: String? { failure.value }

    /// Stops the thread and waits for it.
    func stop() {
        stopFlag.set()
        thread.join()
    }

    /// Keeps calling `probe` (which should publish something) until a new message arrives, so
    /// the subscription is known to be in effect (a SUB socket misses what was published
    /// before it joined). Returns whether one arrived.
    func waitUntilSubscribed(probe: @Sendable (Int) async throws -> Void) async throws -> Bool {
        let before = received.count
        let deadline = ContinuousClock.now + patience
        var attempt = 0
        while ContinuousClock.now < deadline {
            try await probe(attempt)
            if await eventually(within: .milliseconds(200), { self.received.count > before }) { return true }
            attempt += 1
        }
        return false
    }
}

/// A one-way flag threads can read.
final class Stop: Sendable {
    private let flag = Atomic<Bool>(false)
    var isSet: Bool { flag.load(ordering: .acquiring) }
    func set() { flag.store(true, ordering: .releasing) }
}

/// `FeedFollower` (the gap-free subscriber every Logbook consumer uses) on a thread of its
/// own, run the way `logbook subscribe` runs it, keeping every event it hands out.
final class FollowerRecorder: Sendable {
    private let events: Shared<[RecordedEvent]>
    private let failure: Shared<String?>
    private let stopFlag: Stop
    private let thread: OwnedThread

    init(feed: String, log: String, topics: [FeedTopic], from position: Int64) {
        let events = Shared<[RecordedEvent]>([])
        let failure = Shared<String?>(nil)
        let stopping = Stop()
        self.events = events
        self.failure = failure
        stopFlag = stopping
        thread = OwnedThread(name: "e2e-follower") {
            do {
                let context = try ZMQContext()
                var follower = try FeedFollower(
                    context, feed: feed, log: log, topics: topics, cursor: position - 1)
                while !stopping.isSet {
                    let batch = try follower.waitForNext(timeoutMilliseconds: 20).batch
                    events.update { $0 += batch.events }
                }
            } catch {
                failure.update { $0 = "\(error)" }
            }
        }
    }

    /// Every event handed out so far, in the order it was handed out.
    var received: [RecordedEvent] { events.value }

    var problem: String? { failure.value }

    func stop() {
        stopFlag.set()
        thread.join()
    }
}
