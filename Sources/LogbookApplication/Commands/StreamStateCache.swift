public import LogbookDomain

/// The folded state and version of recently used streams, so that a busy product is not
/// re-read from the start of its stream for every purchase. Bounded: past `capacity`
/// entries the least recently used one is dropped. Every operation takes constant time
/// (a hash lookup and a few index updates): the entries sit in one array, linked from the
/// most to the least recently used. Not thread-safe: it belongs to the one thread that
/// runs a `CommandHandler`.
public struct StreamStateCache {
    public struct Entry: Sendable, Equatable {
        public var version: Int
        public var state: AggregateState

        public init(version: Int, state: AggregateState) {
            self.version = version
            self.state = state
        }
    }

    /// One cached stream and its neighbours in the recency order (indices into `slots`).
    private struct Slot {
        var stream: StreamId
        var entry: Entry
        var newer: Int
        var older: Int
    }

    public let capacity: Int
    private var slotOf: [StreamId: Int] = [:]
    private var slots: [Slot] = []
    /// Slots of removed streams, to be used again.
    private var freeSlots: [Int] = []
    private var newest = Self.none
    private var oldest = Self.none
    private static let none = -1

    public init(capacity: Int = 50_000) {
        precondition(capacity > 0, "a cache needs room for at least one stream")
        self.capacity = capacity
    }

    public var count: Int { slotOf.count }

    public mutating func entry(for stream: StreamId) -> Entry? {
        guard let slot = slotOf[stream] else { return nil }
        moveToNewest(slot)
        return slots[slot].entry
    }

    public mutating func store(_ entry: Entry, for stream: StreamId) {
        if let slot = slotOf[stream] {
            slots[slot].entry = entry
            moveToNewest(slot)
            return
        }
        let slot: Int
        if slotOf.count >= capacity {
            // The least recently used stream's slot takes the new one.
            slot = oldest
            unlink(slot)
            slotOf[slots[slot].stream] = nil
            slots[slot] = Slot(stream: stream, entry: entry, newer: Self.none, older: Self.none)
        } else if let reused = freeSlots.popLast() {
            slot = reused
            slots[slot] = Slot(stream: stream, entry: entry, newer: Self.none, older: Self.none)
        } else {
            slot = slots.count
            slots.append(Slot(stream: stream, entry: entry, newer: Self.none, older: Self.none))
        }
        slotOf[stream] = slot
        linkAsNewest(slot)
    }

    public mutating func remove(_ stream: StreamId) {
        guard let slot = slotOf.removeValue(forKey: stream) else { return }
        unlink(slot)
        // Keep no state alive for a stream that is gone.
        slots[slot].entry = Entry(version: 0, state: .initial(for: stream))
        freeSlots.append(slot)
    }

    public mutating func removeAll() {
        slotOf.removeAll(keepingCapacity: true)
        slots.removeAll(keepingCapacity: true)
        freeSlots.removeAll(keepingCapacity: true)
        newest = Self.none
        oldest = Self.none
    }

    private mutating func moveToNewest(_ slot: Int) {
        guard slot != newest else { return }
        unlink(slot)
        linkAsNewest(slot)
    }

    private mutating func unlink(_ slot: Int) {
        let newer = slots[slot].newer
        let older = slots[slot].older
        if newer == Self.none { newest = older } else { slots[newer].older = older }
        if older == Self.none { oldest = newer } else { slots[older].newer = newer }
        slots[slot].newer = Self.none
        slots[slot].older = Self.none
    }

    private mutating func linkAsNewest(_ slot: Int) {
        slots[slot].older = newest
        slots[slot].newer = Self.none
        if newest == Self.none { oldest = slot } else { slots[newest].newer = slot }
        newest = slot
    }
}
