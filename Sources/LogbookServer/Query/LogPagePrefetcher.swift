import LogbookApplication
import LogbookFeed
import LogbookLocks
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
    /// What the reading thread and the consumer share.
    private struct Shared {
        var ready: [Result<FetchedLogPage, FeedFollowError>] = []
        /// The last page (or the error) is in `ready`: nothing more comes.
        var finished = false
        var stopped = false
        /// Bytes of pages the consumer is done with, which the next replies are received into.
        var spares: [[UInt8]] = []
    }

    private let shared = ConditionLock(Shared())
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
        let capacity = capacity
        let handed = shared.withLock(
            when: { $0.ready.count < capacity || $0.stopped },
            do: { shared in
                guard !shared.stopped else { return false }
                shared.ready.append(outcome)
                if last { shared.finished = true }
                return true
            })
        if handed { shared.broadcast() }
        return handed
    }

    /// The next page in order (waiting for it), or nil after the page that reached the head.
    func next() throws(FeedFollowError) -> FetchedLogPage? {
        let outcome = shared.withLock(
            when: { !$0.ready.isEmpty || $0.finished },
            do: { shared in shared.ready.isEmpty ? nil : shared.ready.removeFirst() })
        guard let outcome else { return nil }
        // Room for the next page.
        shared.broadcast()
        return try outcome.get()
    }

    /// Hands back a page the consumer is done with: its bytes take the next reply.
    func recycle(_ page: consuming FetchedLogPage) {
        guard let bytes = page.reusableBytes() else { return }
        shared.withLock { if $0.spares.isEmpty { $0.spares.append(bytes) } }
    }

    private func takeSpare() -> [UInt8] {
        shared.withLock { $0.spares.popLast() ?? [] }
    }

    /// Ends the reading (a page being read is still awaited) and waits for the thread.
    func stop() {
        shared.withLock { $0.stopped = true }
        shared.broadcast()
        thread?.join()
    }
}
