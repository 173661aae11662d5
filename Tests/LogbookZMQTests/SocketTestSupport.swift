import Dispatch
import Glibc
import LogbookZMQ
import Synchronization

/// Receives one message within `milliseconds`, polling so a missing message fails the test
/// instead of hanging it. Returns nil when nothing arrived in time.
func receive(_ socket: borrowing ZMQSocket, within milliseconds: Int = 3_000) throws -> [[UInt8]]? {
    let deadline = ContinuousClock.now + .milliseconds(milliseconds)
    while true {
        if let message = try socket.receive(wait: false) { return message }
        let left = deadline - .now
        if left <= .zero { return nil }
        _ = try ZMQPoll.wait([socket.readable], timeoutMilliseconds: Int(left / .milliseconds(1)) + 1)
    }
}

/// The UTF-8 bytes of `text`, for frames.
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// A frame as text, for readable expectations.
func text(_ frame: [UInt8]) -> String { String(decoding: frame, as: UTF8.self) }

/// A one-shot signal between threads, awaited with a bound.
final class Latch: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)

    func open() { semaphore.signal() }

    /// Whether the latch opened within `milliseconds`.
    func wait(milliseconds: Int = 3_000) -> Bool {
        semaphore.wait(timeout: .now() + .milliseconds(milliseconds)) == .success
    }
}

/// A value one thread records and another reads after the first one ended.
final class Box<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>

    init(_ value: Value) { storage = Mutex(value) }

    var value: Value {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}

/// Waits until `thread` finished, at most `milliseconds`; joins it only when it did, so a
/// thread that never ends fails the test instead of hanging it.
func ended(_ thread: OwnedThread, within milliseconds: Int = 3_000) -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(milliseconds)
    while !thread.isFinished {
        if ContinuousClock.now >= deadline { return false }
        usleep(1_000)
    }
    thread.join()
    return true
}

/// A fresh `ipc://` endpoint in the temporary directory.
func temporaryIPCEndpoint() -> String {
    "ipc:///tmp/logbook-zmq-test-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).sock"
}
