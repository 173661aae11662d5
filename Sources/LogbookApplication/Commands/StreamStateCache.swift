public import LogbookDomain

/// The folded state and version of recently used streams, so that a busy product is not
/// re-read from the start of its stream for every purchase. Bounded twice: past `capacity`
/// entries, or past `byteBudget` bytes of states (`AggregateState.approximateBytes`: a
/// post holds its text, up to 200,000 bytes), the least recently used ones are dropped. Every operation takes constant time
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
    public let byteBudget: Int
    /// What the cached states hold, by `AggregateState.approximateBytes`.
    public private(set) var bytes = 0
    private var slotOf: [StreamId: Int] = [:]
    private var slots: [Slot] = []
    /// Slots of removed streams, to be used again.
    private var freeSlots: [Int] = []
    private var newest = Self.none
    private var oldest = Self.none
    private static let none = -1

    /// By default enough streams for the hot streams of a busy log (a miss costs one read of
    /// the stream), and a byte budget besides: a live post keeps its text, so a bound in
    /// streams alone would let a cache of long posts hold gigabytes.
    public init(capacity: Int = 10_000, byteBudget: Int = 16 << 20) {
        precondition(capacity > 0, "a cache needs room for at least one stream")
        self.capacity = capacity
        self.byteBudget = byteBudget
    }

    public var count: Int { slotOf.count }

    public mutating func entry(for stream: StreamId) -> Entry? {
        guard let slot = slotOf[stream] else { return nil }
        moveToNewest(slot)
        return slots[slot].entry
    }

    public mutating func store(_ entry: Entry, for stream: StreamId) {
        let size = entry.state.approximateBytes
        // A state larger than the whole budget is not kept at all.
        guard size <= byteBudget else { return remove(stream) }
        defer { dropOldestOverBudget() }
        if let slot = slotOf[stream] {
            bytes += size - slots[slot].entry.state.approximateBytes
            slots[slot].entry = entry
            moveToNewest(slot)
            return
        }
        bytes += size
        let slot: Int
        if slotOf.count >= capacity {
            // The least recently used stream's slot takes the new one.
            slot = oldest
            unlink(slot)
            slotOf[slots[slot].stream] = nil
            bytes -= slots[slot].entry.state.approximateBytes
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
        bytes -= slots[slot].entry.state.approximateBytes
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
        bytes = 0
    }

    /// Drops the least recently used streams while the states hold more than `byteBudget`
    /// (the newest always stays: `store` keeps none larger than the budget).
    private mutating func dropOldestOverBudget() {
        while bytes > byteBudget, oldest != Self.none, oldest != newest {
            remove(slots[oldest].stream)
        }
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

extension AggregateState {
    /// Roughly the bytes a cached state keeps alive: a fixed part for the entry, its stream
    /// id and the state's small fields (names, emails, titles are a few hundred bytes at
    /// most), plus a live post's title and text.
    public var approximateBytes: Int {
        guard case .post(.live(let post)) = self else { return 256 }
        return 256 + post.title.value.utf8.count + post.content.value.utf8.count
    }
}
