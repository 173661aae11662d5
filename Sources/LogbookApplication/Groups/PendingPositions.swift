/// The positions of a group's pending events, in increasing order, with the smallest one
/// at hand: the group's checkpoint is just before it. Positions are added in increasing
/// order (the log is read forwards) and removed in any order; a removal marks its slot and
/// the marked slots are dropped once they are the majority, so every operation takes
/// logarithmic time or less, amortised, and the memory is proportional to what is pending.
struct PendingPositions {
    private var positions: [Int64] = []
    private var removed: [Bool] = []
    private var start = 0
    private var removedCount = 0

    /// How many positions are pending.
    var count: Int { positions.count - start - removedCount }

    /// The smallest pending position.
    var first: Int64? {
        mutating get {
            while start < positions.count, removed[start] {
                start += 1
                removedCount -= 1
            }
            return start < positions.count ? positions[start] : nil
        }
    }

    /// Adds `position`, which is greater than every position added before.
    mutating func append(_ position: Int64) {
        precondition(positions.last.map { $0 < position } ?? true, "pending positions are added in order")
        positions.append(position)
        removed.append(false)
    }

    /// Removes `position`; false when it is not pending.
    @discardableResult
    mutating func remove(_ position: Int64) -> Bool {
        var low = start
        var high = positions.count
        while low < high {
            let middle = (low + high) / 2
            if positions[middle] < position { low = middle + 1 } else { high = middle }
        }
        guard low < positions.count, positions[low] == position, !removed[low] else { return false }
        removed[low] = true
        removedCount += 1
        compactIfSparse()
        return true
    }

    private mutating func compactIfSparse() {
        let slots = positions.count - start
        guard slots > 1_024, removedCount * 2 > slots else { return }
        var kept: [Int64] = []
        kept.reserveCapacity(slots - removedCount)
        for index in start..<positions.count where !removed[index] { kept.append(positions[index]) }
        positions = kept
        removed = Array(repeating: false, count: kept.count)
        start = 0
        removedCount = 0
    }
}
