import Foundation
import LogbookApplication
import LogbookFeed
import LogbookZMQ

/// Reads the whole log, from position 1 to its head, on a thread of its own and at most
/// `capacity` pages ahead of its consumer, so reading the next page overlaps applying the
/// current one. The thread owns its `ReadLog` channel for its whole life; pages are handed
/// over in order, each kept as the bytes it came in when it is in the worker's exact form
/// (`LogReadChannel.readEncoded`), and `recycle` hands an applied page's bytes back for the
/// next reply. `next()` gives each page, then nil once a page reached the head; an error
/// ends the reading and is handed over in its turn. `stop()` ends it early and waits for
/// the thread.
final class LogPagePrefetcher: @unchecked Sendable {
    // Everything below `condition` is read and written only with `condition` locked.
    private let condition = NSCondition()
    private var ready: [Result<FetchedLogPage, FeedFollowError>] = []
    private var finished = false
    private var stopped = false
    /// Bytes of pages the consumer is done with, which the next replies are received into.
    private var spares: [[UInt8]] = []
    private let capacity: Int
    private var thread: OwnedThread?

    /// Starts reading at once, pages of `pageSize`, through a channel `makeChannel` creates
    /// on the reading thread.
    init(
        pageSize: Int, capacity: Int = 1,
        makeChannel: @escaping @Sendable () throws(FeedFollowError) -> LogReadChannel
    ) {
        self.capacity = max(1, capacity)
        thread = OwnedThread(name: "logbook-rebuild-reader") { [self] in
            do throws(FeedFollowError) {
                var channel = try makeChannel()
                var cursor: Int64 = 0
                while true {
                    let page = try channel.readEncoded(
                        from: cursor + 1, limit: pageSize, topics: nil, reusing: takeSpare())
                    cursor = page.through(after: cursor)
                    let atHead = page.next > page.head
                    guard hand(.success(page), last: atHead), !atHead else { return }
                }
            } catch {
                _ = hand(.failure(error), last: true)
            }
        }
    }

    /// Waits for room, then hands `outcome` over. False when the consumer stopped.
    private func hand(_ outcome: Result<FetchedLogPage, FeedFollowError>, last: Bool) -> Bool {
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
    func next() throws(FeedFollowError) -> FetchedLogPage? {
        condition.lock()
        defer { condition.unlock() }
        while ready.isEmpty && !finished { condition.wait() }
        guard !ready.isEmpty else { return nil }
        let outcome = ready.removeFirst()
        condition.broadcast()
        return try outcome.get()
    }

    /// Hands back a page the consumer is done with: its bytes take the next reply.
    func recycle(_ page: consuming FetchedLogPage) {
        guard case .encoded(let encoded) = consume page else { return }
        condition.lock()
        defer { condition.unlock() }
        if spares.isEmpty { spares.append(encoded.bytes) }
    }

    private func takeSpare() -> [UInt8] {
        condition.lock()
        defer { condition.unlock() }
        return spares.popLast() ?? []
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
