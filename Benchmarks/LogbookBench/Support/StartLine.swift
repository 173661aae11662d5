import Foundation
import LogbookZMQ

/// Lets load threads set up their sockets first and then start together: each calls
/// `arriveAndWait()`, the coordinator waits for all of them (`waitForAll`) and fires the
/// start with `go()`, which every thread receives as the common start time.
final class StartLine: @unchecked Sendable {
    // `arrived` and `start` are only read or written with `condition` locked.
    private let condition = NSCondition()
    private let expected: Int
    private var arrived = 0
    private var start: UInt64?

    init(expected: Int) {
        self.expected = expected
    }

    /// Called by each load thread once ready; returns the start time.
    func arriveAndWait() -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        arrived += 1
        condition.broadcast()
        while true {
            if let start { return start }
            condition.wait()
        }
    }

    func waitForAll() {
        condition.lock()
        defer { condition.unlock() }
        while arrived < expected { condition.wait() }
    }

    @discardableResult
    func go() -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        let now = BenchClock.nanoseconds()
        start = now
        condition.broadcast()
        return now
    }
}

extension StartLine {
    /// Runs `body(index, startLine)` on `count` dedicated threads named `name-index` (never
    /// Swift's cooperative pool). Each sets up, then calls `arriveAndWait()`; once all have
    /// arrived and `settleMilliseconds` passed, they start together. Returns their results
    /// once every thread ended, in the order they finished.
    static func runTogether<Result: Sendable>(
        count: Int, name: String, settleMilliseconds: Int,
        _ body: @escaping @Sendable (Int, StartLine) -> Result
    ) -> [Result] {
        let startLine = StartLine(expected: count)
        let results = Shared<[Result]>([])
        let threads = (0..<count).map { index in
            OwnedThread(name: "\(name)-\(index)") {
                let result = body(index, startLine)
                results.update { $0.append(result) }
            }
        }
        startLine.waitForAll()
        BenchClock.sleep(milliseconds: settleMilliseconds)
        startLine.go()
        for thread in threads { thread.join() }
        return results.value
    }
}
