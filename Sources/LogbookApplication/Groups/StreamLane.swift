/// One stream's events in a group, not yet done: delivered one at a time, in position
/// order. The head (`queue[0]`) is the one delivered, waiting for its turn, or parked. At
/// most `ConsumerGroup.laneMemoryLimit` events are held in memory (only the head while it is
/// parked); the stream's later events are left in the log (`spilledAfter`) and read from it
/// again once the queue runs dry.
struct StreamLane {
    var queue: [PendingEvent] = []
    /// When set, the stream's events after this position, up to `lastPosition`, are in the
    /// log only (`spilled` of them).
    var spilledAfter: Int64?
    var spilled = 0
    /// The last position of the stream the group has taken from the log.
    var lastPosition: Int64 = 0
    /// True while the head is delivered and not yet acknowledged or failed.
    var inFlight = false

    var head: PendingEvent? { queue.first }

    /// Whether the head may be delivered now.
    var isReady: Bool { !inFlight && queue.first.map { !$0.parked } ?? false }

    /// Whether the lane holds nothing and knows of nothing more in the log.
    var isEmpty: Bool { queue.isEmpty && spilledAfter == nil }

    /// What `take` did: whether the lane was empty before, whether its head became ready,
    /// whether the event is held in memory (else it is left in the log), and whether it is
    /// the head.
    struct Taken {
        var wasEmpty: Bool
        var becameReady: Bool
        var inMemory: Bool
        var isHead: Bool
    }

    /// Takes the stream's next event from the log: into the queue while it holds fewer than
    /// `memoryLimit`, nothing is left in the log and the head is not parked; else it is left
    /// in the log (`spilledAfter`).
    mutating func take(_ event: PendingEvent, memoryLimit: Int) -> Taken {
        let wasEmpty = isEmpty
        let wasReady = isReady
        lastPosition = event.position
        let inMemory = spilledAfter == nil && queue.count < memoryLimit && head?.parked != true
        if inMemory {
            queue.append(event)
        } else {
            if spilledAfter == nil { spilledAfter = queue.last?.position ?? event.position - 1 }
            spilled += 1
        }
        return Taken(
            wasEmpty: wasEmpty, becameReady: !wasReady && isReady, inMemory: inMemory,
            isHead: inMemory && queue.count == 1
        )
    }

    /// The smallest position of the stream that may not be done: the head, or when the queue
    /// ran dry, the first position after what was read (nil for an empty lane).
    var lowMark: Int64? { queue.first?.position ?? spilledAfter.map { $0 + 1 } }
}
