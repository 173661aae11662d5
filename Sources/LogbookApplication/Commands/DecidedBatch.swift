import LogbookDomain

/// A batch parsed and its first round decided (`CommandHandler.decide`, which may add more
/// commands to it), to be sent by the same handler (`CommandHandler.send`). Decided while
/// another batch was in flight, its decisions assume that batch commits whole until `send`
/// checks it.
public struct DecidedBatch {
    var work: BatchWork
    var round: DecidedRound
    /// The handler's count of batches sent when this one was decided.
    let basis: Int
    /// Some of it was decided while a batch was in flight, on the state it leaves if it all commits.
    var overFlying: Bool

    /// How many commands it holds.
    public var count: Int { work.requests.count }
}

/// One decision to record: the command's index in its batch, the append request that
/// records it, and the streams it read or wrote (`touched`).
struct DecidedEntry {
    let index: Int
    let request: AppendRequest
    let touched: [StreamId]
}

/// A round of decisions: those to record, in order, the state they leave (`overlay`), and
/// the commands taken out of it to be decided again (`dropped`).
struct DecidedRound {
    var overlay: StateOverlay
    var entries: [DecidedEntry] = []
    /// Indices of the commands taken out by `dropDecisionsOn`.
    private(set) var dropped: [Int] = []
    /// The streams those touched, which left the overlay: their cached states are not to be
    /// trusted either (a kept decision's write to one of them is not cached).
    private(set) var forgotten = Set<StreamId>()

    init(overlay: StateOverlay) {
        self.overlay = overlay
    }

    /// Takes out every decision that touched a `suspect` stream (one that a command of the
    /// batch it was decided over touched and did not commit: what it read of that stream,
    /// from that batch or through an earlier decision of its own, may be a state the log
    /// never held), and every decision that built on one taken out; the streams they touched
    /// leave the overlay, so that what they staged is never cached. A decision that read a
    /// suspect stream from the cache or the log alone is taken out too: it would most likely
    /// meet a conflict.
    mutating func dropDecisionsOn(_ suspect: Set<StreamId>) {
        guard !suspect.isEmpty else { return }
        var droppedIds = Set<String>()
        var untrusted = Set<StreamId>()
        var kept: [DecidedEntry] = []
        kept.reserveCapacity(entries.count)
        for entry in entries {
            if entry.touched.contains(where: suspect.contains)
                || !entry.request.dependencies.isDisjoint(with: droppedIds)
            {
                droppedIds.insert(entry.request.commandId)
                untrusted.formUnion(entry.touched)
                dropped.append(entry.index)
            } else {
                kept.append(entry)
            }
        }
        entries = kept
        overlay.forget(untrusted)
        forgotten.formUnion(untrusted)
    }
}

/// The batch a handler sent and has not yet landed.
struct FlyingBatch {
    var work: BatchWork
    let round: DecidedRound
}
