/// One stream's pending events in a group: delivered one at a time, in position order.
/// The head (`queue[0]`) is the one delivered, waiting for its turn, or parked. At most
/// `ConsumerGroup.laneMemoryLimit` events are held in memory; the stream's later events stay
/// in the group store only (`spilledAfter`) until the queue runs dry and is refilled.
struct StreamLane {
    var queue: [PendingEvent] = []
    /// When set, the stream's pending events after this position are in the store only.
    var spilledAfter: Int64?
    /// The last position of the stream the group has taken from the log.
    var lastPosition: Int64 = 0
    /// True while the head is delivered and not yet acknowledged or failed.
    var inFlight = false

    var head: PendingEvent? { queue.first }

    /// Whether the head may be delivered now.
    var isReady: Bool { !inFlight && queue.first.map { !$0.parked } ?? false }

    /// Whether the lane holds nothing and knows of nothing more in the store.
    var isEmpty: Bool { queue.isEmpty && spilledAfter == nil }
}
