import LogbookApplication
import LogbookSQLite

/// Writes a `SyntheticHistory` into an event log through `SQLiteEventStore` (so the file
/// is exactly what the worker writes: its schema, its triggers, a command record per
/// command), in large batches, before the worker starts on it.
enum LogGenerator {
    struct Summary: Sendable {
        var events: Int
        var streams: Int
        var seconds: Double
    }

    static let batchSize = 2_000

    static func write(events: Int, streams: Int, seed: UInt64 = 20_240_601, to path: String) throws(BenchError)
        -> Summary
    {
        let plan = try SyntheticHistory.Plan(events: events, streams: streams)
        let store: SQLiteEventStore
        do {
            store = try SQLiteEventStore(path: path)
        } catch {
            throw BenchError("cannot open \(path) to generate the log: \(error)")
        }
        // Timestamps end about now, one millisecond a command.
        let now = Int64(BenchClock.wallMilliseconds())
        var history = SyntheticHistory(plan, seed: seed, startingAt: now - Int64(plan.events))
        let started = BenchClock.nanoseconds()
        var batch: [AppendRequest] = []
        batch.reserveCapacity(batchSize)
        var written = 0
        while true {
            let next = try history.next()
            if let next { batch.append(next) }
            guard batch.count == batchSize || (next == nil && !batch.isEmpty) else {
                if next == nil { break }
                continue
            }
            let results: [AppendResult]
            do {
                results = try store.append(batch)
            } catch {
                throw BenchError("the generated log could not be written: \(error)")
            }
            for result in results {
                guard case .committed = result else {
                    throw BenchError("the generated log was refused by the store: \(result)")
                }
            }
            written += batch.reduce(0) { $0 + $1.events.count }
            batch.removeAll(keepingCapacity: true)
        }
        return Summary(events: written, streams: plan.streams, seconds: BenchClock.seconds(since: started))
    }
}
