import Foundation
import LogbookApplication
import LogbookZMQ

/// Reads the whole log, from position 1 to its head, on a thread of its own and at most
/// `capacity` pages ahead of its consumer, so reading the next page overlaps applying the
/// current one. The thread owns its `ReadLog` channel for its whole life; pages are handed
/// over in order. `next()` gives each page, then nil once a page reached the head; an error
/// ends the reading and is handed over in its turn. `stop()` ends it early and waits for
/// the thread.
final class LogPagePrefetcher: @unchecked Sendable {
    // Everything below `condition` is read and written only with `condition` locked.
    private let condition = NSCondition()
    private var ready: [Result<LogPage, FeedFollowError>] = []
    private var finished = false
    private var stopped = false
    private let capacity: Int
    private var thread: OwnedThread?

    /// Starts reading at once, pages of `pageSize`, through a channel `makeChannel` creates
    /// on the reading thread.
    init(
        pageSize: Int, capacity: Int = 2,
        makeChannel: @escaping @Sendable () throws(FeedFollowError) -> LogReadChannel
    ) {
        self.capacity = max(1, capacity)
        thread = OwnedThread(name: "logbook-rebuild-reader") { [self] in
            do throws(FeedFollowError) {
                var channel = try makeChannel()
                var cursor: Int64 = 0
                while true {
                    let page = try channel.read(from: cursor + 1, limit: pageSize, topics: nil)
                    cursor = max(cursor, page.next - 1, page.events.last?.position ?? 0)
                    let atHead = page.next > page.head
                    guard hand(.success(page), last: atHead), !atHead else { return }
                }
            } catch {
                _ = hand(.failure(error), last: true)
            }
        }
    }

    /// Waits for room, then hands `outcome` over. False when the consumer stopped.
    private func hand(_ outcome: Result<LogPage, FeedFollowError>, last: Bool) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while ready.count >= capacity && !stopped { condition.wait() }
        guard !stopped else { return false }
        ready.append(outcome)
        if last { finished = true }
        condition.broadcast()
        return true
    }

    /// The next page in order (waiting for it), or nil after the page that reached the head.
    func next() throws(FeedFollowError) -> LogPage? {
        condition.lock()
        defer { condition.unlock() }
        while ready.isEmpty && !finished { condition.wait() }
        guard !ready.isEmpty else { return nil }
        let outcome = ready.removeFirst()
        condition.broadcast()
        return try outcome.get()
    }

    /// Ends the reading (a page being read is still awaited) and waits for the thread.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
        thread?.join()
    }
}
