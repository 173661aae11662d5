import LogbookApplication
import LogbookFeed
import LogbookZMQ

/// The query process's projection thread: follows the feed gap-free (`FeedFollower`) and
/// applies each batch to the current generation's store together with its checkpoint;
/// publishes how far it got and wakes the query thread when queries wait for it
/// (`QueryProcessState.publishProgress`). While behind it applies pages of the log as the
/// bytes they came in (`FeedFollower.nextLogPage()`), several in one transaction. When the feed is quiet for
/// the follower's idle catch-up time it reads the log once, so a lost last message is found within it. It also
/// switches to a generation a rebuild finished, after catching that one up past its own
/// position, so answers never go back in time.
struct ProjectionLoop: ~Copyable {
    static let retryMilliseconds = 500
    /// How many events a catch-up gathers (whole pages) into one transaction at most: far
    /// fewer pages are written to the WAL than with one commit per page.
    static let catchUpBatch = 20_000
    /// How many bytes of pages a catch-up gathers at most before it applies them (a page
    /// is gathered whole, so one more may go over). Events may be large (a post's content
    /// is up to 200,000 bytes), so a bound in events alone would bound no memory.
    static let catchUpBytes = 16 << 20

    var follower: FeedFollower
    var store: any ReadModelStore
    var generation: Int
    let state: QueryProcessState
    let diagnostics: Diagnostics
    /// Checked in on every turn, for the supervisor's watchdog.
    var heartbeat = Heartbeat()

    mutating func run() {
        publish()
        var failing = false
        while true {
            heartbeat.beat()
            do {
                try handleRequests()
                if let first = try follower.nextLogPage() {
                    try catchUp(from: first)
                } else {
                    let (batch, woken) = try follower.waitForNext(
                        timeoutMilliseconds: heartbeat.pollTimeout(follower.idleCatchUpMilliseconds),
                        alsoWatching: [state.projectionWake.readable])
                    if woken[0] { state.projectionWake.drain() }
                    try apply(batch, to: store)
                }
                if failing {
                    diagnostics.info("following the log again", ["position": "\(follower.cursor)"])
                    failing = false
                }
                publish()
            } catch FeedFollowError.stopped {
                return
            } catch let error as ZMQError where error.isTerminated {
                return
            } catch {
                if !failing { diagnostics.warning("projection cannot go on; retrying", ["error": "\(error)"]) }
                failing = true
                follower.reset(cursor: (try? store.checkpoint()) ?? 0)
                if (try? ZMQPoll.wait([state.projectionWake.readable], timeoutMilliseconds: Self.retryMilliseconds))
                    == nil
                {
                    return
                }
            }
        }
    }

    /// Behind (at start, after a hole, after a quiet second): gathers pages of the log, kept
    /// as their bytes, up to `catchUpBatch` events or `catchUpBytes` bytes, and applies them
    /// with the checkpoint they reach in one transaction. Their events of the feed's topics
    /// count as applied (as from `FeedFollower.next()`, which hands out only those).
    private mutating func catchUp(from first: (page: FetchedLogPage, through: Int64)) throws {
        var pages = [first]
        var events = first.page.count
        var bytes = first.page.byteCount
        while events < Self.catchUpBatch, bytes < Self.catchUpBytes, let next = try follower.nextLogPage() {
            pages.append(next)
            events += next.page.count
            bytes += next.page.byteCount
        }
        let through = pages[pages.count - 1].through
        if try events > 0 || through > store.checkpoint() {
            try store.apply(JoinedEventBatch(pages.map(\.page)), through: through)
        }
        let applied = pages.reduce(0) { $0 + $1.page.topicalCount }
        if applied > 0 { state.update { $0.eventsApplied += applied } }
        follower.recycle(pages[pages.count - 1].page)
    }

    /// Applies a batch. Only events after `alreadyCounted` count as applied in `Status`
    /// (a rebuilt generation catching up on events the current one has applied adds none).
    private func apply(_ batch: FeedBatch, to target: any ReadModelStore, alreadyCounted: Int64 = 0) throws {
        guard try !batch.events.isEmpty || batch.through > target.checkpoint() else { return }
        try target.apply(batch.events, through: batch.through)
        let fresh = batch.events.count(where: { $0.position > alreadyCounted })
        if fresh > 0 { state.update { $0.eventsApplied += fresh } }
    }

    /// Takes a catch-up request or a finished rebuild off the shared state.
    private mutating func handleRequests() throws {
        let (catchUp, rebuild) = state.update { snapshot in
            defer { snapshot.catchUpRequested = false }
            return (snapshot.catchUpRequested, snapshot.rebuild)
        }
        if catchUp { follower.requestCatchUp() }
        if case .finished(let newGeneration, let newStore, _) = rebuild {
            try switchTo(newGeneration, newStore)
        }
    }

    /// Takes over the finished generation's store, brings it up to (at least) this loop's
    /// position, and makes it current. The query thread then reads from it and removes
    /// the older generations.
    private mutating func switchTo(_ newGeneration: Int, _ newStore: any ReadModelStore) throws {
        let reached = follower.cursor
        follower.reset(cursor: try newStore.checkpoint())
        while follower.needsCatchUp || follower.cursor < reached {
            if !follower.needsCatchUp { follower.requestCatchUp() }
            try apply(try follower.next(), to: newStore, alreadyCounted: reached)
        }
        store = newStore
        generation = newGeneration
        diagnostics.info(
            "switched to rebuilt read models", ["generation": "\(newGeneration)", "position": "\(follower.cursor)"])
        // The new generation and the end of the rebuild are published together, so no
        // `Rebuild` request can see "idle" beside the old generation and start a rebuild
        // whose files the switch would then take for old ones.
        publish(rebuildEnded: true)
    }

    private func publish(rebuildEnded: Bool = false) {
        let cursor = follower.cursor
        let head = follower.lastKnownHead
        let holes = follower.holesDetected
        let current = generation
        let now = MonotonicClock.milliseconds()
        state.publishProgress(always: rebuildEnded) { snapshot in
            snapshot.applied = cursor
            snapshot.head = max(snapshot.head, head, cursor)
            if cursor >= snapshot.head { snapshot.caughtUpAt = now }
            snapshot.generation = current
            snapshot.holesDetected = holes
            if rebuildEnded { snapshot.rebuild = .idle }
        }
    }
}
