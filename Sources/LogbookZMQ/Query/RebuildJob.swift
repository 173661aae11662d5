import LogbookApplication
import LogbookDomain

/// A rebuild, on its own thread: fills a new read-model generation from position 1 by
/// reading the log page by page (the current generation keeps answering meanwhile),
/// marks it complete, and hands it to the projection thread, which switches over.
struct RebuildJob: ~Copyable {
    static let pageSize = 5_000

    var channel: LogReadChannel
    let generations: any ReadModelGenerations
    let state: QueryProcessState
    let clock: any Clock
    let log: ProcessLog

    mutating func run() {
        let startedAt = clock.now().millisecondsSinceEpoch
        do {
            let (generation, store) = try generations.createNext()
            log.info("rebuild started", ["generation": "\(generation)"])
            var cursor: Int64 = 0
            while true {
                let page = try channel.read(from: cursor + 1, limit: Self.pageSize, topics: nil)
                let through = max(cursor, page.next - 1, page.events.last?.position ?? 0)
                try store.apply(page.events.filter { $0.position > cursor }, through: through)
                cursor = through
                state.update {
                    $0.rebuild = .running(
                        generation: generation, position: cursor, head: page.head, startedAt: startedAt)
                }
                state.queryWake.wake()
                if page.next > page.head { break }
            }
            try store.markComplete()
            let seconds = Double(clock.now().millisecondsSinceEpoch - startedAt) / 1000
            log.info(
                "rebuild filled", ["generation": "\(generation)", "position": "\(cursor)", "seconds": "\(seconds)"])
            state.update { $0.rebuild = .finished(generation: generation, store: store, startedAt: startedAt) }
            state.projectionWake.wake()
        } catch FeedFollowError.stopped {
            state.update { $0.rebuild = .failed(reason: "the process stopped") }
        } catch {
            log.error("rebuild failed", ["error": "\(error)"])
            state.update { $0.rebuild = .failed(reason: "\(error)") }
            state.queryWake.wake()
        }
    }
}
