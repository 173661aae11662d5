import LogbookJSON

/// The worker's batching between two of its `Status` replies: how many commands went into
/// how many group commits, and how far the log's head moved.
struct WorkerBatches {
    var commands: Double
    var batches: Int
    var events: Int

    init(before: JSONObject, after: JSONObject) {
        func batching(_ status: JSONObject) -> (count: Int, mean: Double) {
            let batches = status["batches"]?.objectValue
            let mean: Double =
                switch batches?["meanSize"] {
                case .double(let value)?: value
                case .int(let value)?: Double(value)
                default: 0
                }
            return (batches?["count"]?.intValue ?? 0, mean)
        }
        let (countBefore, meanBefore) = batching(before)
        let (countAfter, meanAfter) = batching(after)
        batches = countAfter - countBefore
        commands = Double(countAfter) * meanAfter - Double(countBefore) * meanBefore
        events = (after["head"]?.intValue ?? 0) - (before["head"]?.intValue ?? 0)
    }

    /// Commands per group commit (the worker reports its cumulative mean to two decimals).
    var meanSize: Double { batches > 0 ? (commands / Double(batches) * 10).rounded() / 10 : 0 }
}
