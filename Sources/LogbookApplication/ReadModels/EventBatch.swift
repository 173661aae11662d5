/// Events of the log in position order, as a `ReadModelStore` applies them in one
/// transaction, however they are held: decoded (`[RecordedEvent]`) or as the bytes they
/// arrived in (a page of a `ReadLog` reply, which the wire's types own).
///
/// Whatever the form, a batch promises the row changes, and the refusals, that the same
/// events decoded give (`Projector.changes`): a form that reads bytes faster is a detail of
/// the type that owns the bytes, invisible to the stores.
public protocol EventBatch: Sendable {
    /// How many events the batch holds.
    var count: Int { get }

    /// The position of the event at `index` (`0..<count`).
    func position(at index: Int) -> Int64

    /// The row changes of the events at `indices`, in order, as `Projector.changes` gives
    /// them for the same events decoded, errors included. Pure: it may run on any thread.
    func readModelChanges(_ indices: Range<Int>) throws(ReadModelStoreError) -> [ReadModelChange]
}

extension Array: EventBatch where Element == RecordedEvent {
    public func position(at index: Int) -> Int64 { self[index].position }

    public func readModelChanges(_ indices: Range<Int>) throws(ReadModelStoreError) -> [ReadModelChange] {
        try Projector.changes(self[indices])
    }
}

/// Consecutive batches taken as one (the pages a catch-up gathers for one transaction):
/// their events in order, the first batch's first.
public struct JoinedEventBatch<Part: EventBatch>: EventBatch {
    public let parts: [Part]
    /// The index, in the joined batch, of each part's first event.
    private let starts: [Int]
    public let count: Int

    public init(_ parts: [Part]) {
        self.parts = parts
        var starts: [Int] = []
        starts.reserveCapacity(parts.count)
        var count = 0
        for part in parts {
            starts.append(count)
            count += part.count
        }
        self.starts = starts
        self.count = count
    }

    public func position(at index: Int) -> Int64 {
        let part = self.part(holding: index)
        return parts[part].position(at: index - starts[part])
    }

    public func readModelChanges(_ indices: Range<Int>) throws(ReadModelStoreError) -> [ReadModelChange] {
        guard !indices.isEmpty else { return [] }
        var changes: [ReadModelChange] = []
        var part = self.part(holding: indices.lowerBound)
        while part < parts.count, starts[part] < indices.upperBound {
            let start = starts[part]
            let lower = max(indices.lowerBound, start) - start
            let local = lower..<min(indices.upperBound, start + parts[part].count) - start
            if !local.isEmpty { changes += try parts[part].readModelChanges(local) }
            part += 1
        }
        return changes
    }

    /// The part that holds the event at `index`: the last whose first event is at or before
    /// it (an empty part shares its start with the next, so it is never the last).
    private func part(holding index: Int) -> Int {
        var low = 0
        var high = starts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if starts[middle] <= index { low = middle } else { high = middle - 1 }
        }
        return low
    }
}
