import LogbookApplication
import LogbookDomain
import LogbookFeed
import LogbookZMQ

/// A rebuild, on its own thread: fills a new read-model generation from position 1 (the
/// current generation keeps answering meanwhile), marks it complete, and hands it to the
/// projection thread, which switches over. Pages are read one ahead on another thread
/// (`LogPagePrefetcher`) while this one applies the current page, straight from the bytes
/// they came in (`EncodedLogPage`: no `RecordedEvent`s are made), and the new generation
/// is bulk loaded (`ReadModelStore.beginBulkLoad`): no one reads it before it is complete,
/// and a crash before that leaves a file that is thrown away at the next start.
struct RebuildJob: ~Copyable {
    /// Events per page: a quarter of what `ReadLog` allows, so that the pages in flight (each
    /// kept as its bytes until applied) hold little memory, which leaves the bulk load room
    /// for more rows: the more rows it holds, the fewer it writes more than once.
    static let pageSize = 2_500

    let makeChannel: @Sendable () throws(FeedFollowError) -> LogReadChannel
    let generations: any ReadModelGenerations
    let state: QueryProcessState
    let clock: any Clock
    let diagnostics: Diagnostics
    /// Hands the memory the process has freed back to the system (glibc keeps it in its
    /// arenas), called before the bulk load grows: a rebuild on a thread whose arena holds
    /// little of it would otherwise add its peak on top of what the catch-up left there.
    let releaseFreeMemory: @Sendable () -> Void

    func run() {
        let startedAt = clock.now().millisecondsSinceEpoch
        let reader = LogPagePrefetcher(pageSize: Self.pageSize, makeChannel: makeChannel)
        defer { reader.stop() }
        do {
            let (generation, store) = try generations.createNext()
            diagnostics.info("rebuild started", ["generation": "\(generation)"])
            try store.beginBulkLoad()
            releaseFreeMemory()
            var cursor: Int64 = 0
            while let page = try reader.next() {
                let (fresh, through) = page.following(cursor)
                try store.apply(fresh, through: through)
                reader.recycle(page)
                cursor = through
                state.update {
                    $0.rebuild = .running(
                        generation: generation, position: cursor, head: page.head, startedAt: startedAt)
                }
                state.queryWake.wake()
            }
            try store.endBulkLoad()
            try store.markComplete()
            let seconds = Double(clock.now().millisecondsSinceEpoch - startedAt) / 1000
            diagnostics.info(
                "rebuild filled", ["generation": "\(generation)", "position": "\(cursor)", "seconds": "\(seconds)"])
            state.update { $0.rebuild = .finished(generation: generation, store: store, startedAt: startedAt) }
            state.projectionWake.wake()
        } catch FeedFollowError.stopped {
            state.update { $0.rebuild = .failed(reason: "the process stopped") }
        } catch {
            diagnostics.error("rebuild failed", ["error": "\(error)"])
            state.update { $0.rebuild = .failed(reason: Self.reasonForClients(error)) }
            state.queryWake.wake()
        }
    }

    /// Why the rebuild failed, as `Status` tells clients: the cause, never a file's path
    /// (the process log has the whole error).
    static func reasonForClients(_ error: any Error) -> String {
        switch error {
        case let error as ReadModelStoreError: ServiceError(error).message
        case let error as FeedFollowError: error.description
        default: "the rebuild failed; the query process's log says why"
        }
    }
}
