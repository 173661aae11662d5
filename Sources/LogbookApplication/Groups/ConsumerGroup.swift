/// One consumer group's delivery rules, in memory and free of I/O: the caller feeds it the
/// log's events, members' messages and the time, and writes what it records
/// (`takeChanges()`) to the group store before it sends the deliveries it hands out or
/// confirms an acknowledgement.
///
/// The rules (docs/architecture.md, "Consumer groups"): at least once; within a stream in
/// position order with at most one event in flight; a stream stays with the member it was
/// given to while that member lives, and new streams go to the member holding the fewest
/// deliveries; an event not acknowledged within `ackWaitMilliseconds`, nacked, or held by a
/// member that left or went silent is delivered again, and after `maxDeliver` deliveries it
/// is parked: its stream waits, the others go on. The checkpoint is the position before the
/// smallest pending event. Memory stays bounded: the group takes events from the log only
/// while fewer than `window` wait in memory and fewer than `pendingLimit` are pending, and a
/// stream keeps at most `laneMemoryLimit` of its events in memory (the rest stay in the
/// store, `refillsNeeded`).
public struct ConsumerGroup {
    /// Events of one stream held in memory at most; the rest wait in the store.
    public static let laneMemoryLimit = 16

    public private(set) var record: GroupRecord
    /// Events waiting in memory beyond which the group takes nothing more from the log.
    public let window: Int
    /// Milliseconds of silence after which a member is taken to be gone.
    public let memberTimeoutMilliseconds: Int64
    public private(set) var counters = GroupCounters()
    /// Streams whose in-memory queue ran dry while the store holds more of their events:
    /// read them (`pendingNeeded(for:)`) and hand them to `refill` after the store has
    /// committed what the group recorded.
    public private(set) var refillsNeeded: Set<String> = []
    /// Pending events held in memory.
    public private(set) var queuedInMemory = 0

    private var lanes: [String: StreamLane] = [:]
    private var ready = ReadyLanes()
    private var pendingPositions = PendingPositions()
    private var members: [MemberId: GroupMember] = [:]
    private var inFlight: [Int64: (stream: String, member: MemberId, deadline: Int64)] = [:]
    private var affinity: [String: MemberId] = [:]
    private var parkedPositions: Set<Int64> = []
    private var changes = GroupChanges.Progress()
    private let categories: Set<String>

    /// Affinities of streams with nothing pending are forgotten beyond this many.
    static let affinityLimit = 100_000

    /// A group as the store holds it, with nothing pending yet; hand its pending events to
    /// `restore(_:)` in position order.
    public init(_ record: GroupRecord, window: Int = 10_000, memberTimeoutMilliseconds: Int64 = 5_000) {
        self.record = record
        self.window = max(1, window)
        self.memberTimeoutMilliseconds = memberTimeoutMilliseconds
        categories = Set(record.categories)
    }

    // MARK: What the group holds

    /// Pending events (in memory or in the store) per event of `window` beyond which the group
    /// takes nothing more from the log: a few long streams, or a parked event's stream, fill
    /// the store and not memory, but each pending position still costs a few bytes here.
    public static let pendingPerWindow = 100
    /// Pending events beyond which the group takes nothing more from the log.
    public var pendingLimit: Int { window * Self.pendingPerWindow }

    /// Whether the group takes more events from the log now.
    public var wantsEvents: Bool { queuedInMemory < window && pendingPositions.count < pendingLimit }
    public var memberCount: Int { members.count }
    public var inFlightCount: Int { inFlight.count }
    public var pendingCount: Int { pendingPositions.count }
    public var parkedCount: Int { parkedPositions.count }
    public func isMember(_ member: MemberId) -> Bool { members[member] != nil }
    /// The members, in no particular order.

    /// The parked events, in position order.
    public var parked: [PendingEvent] {
        parkedPositions.sorted().compactMap { position in
            lanes.values.first { $0.head?.position == position }?.head
        }
    }

    /// What the group recorded since the last call, for the store.
    public mutating func takeChanges() -> GroupChanges.Progress {
        defer { changes = GroupChanges.Progress() }
        return changes
    }

    // MARK: Events from the log

    /// Pending events read back from the store after a restart, in position order.
    public mutating func restore(_ events: [PendingEvent]) {
        for event in events { take(event, inserting: false) }
    }

    /// The log's events after `scanned`, in position order; every event of the group's
    /// categories up to `through` is among them.
    public mutating func offer(_ events: [PendingEvent], through: Int64) {
        for event in events where event.position > record.scanned {
            guard categories.contains(RecordedEvent.category(ofStream: event.stream)) else { continue }
            take(event, inserting: true)
        }
        if through > record.scanned {
            record.scanned = through
            changes.scanned = through
        }
        moveCheckpoint()
    }

    private mutating func take(_ event: PendingEvent, inserting: Bool) {
        if inserting { changes.inserted.append(event) }
        pendingPositions.append(event.position)
        var lane = lanes[event.stream] ?? StreamLane()
        let wasReady = lane.isReady
        lane.lastPosition = event.position
        if lane.spilledAfter == nil, lane.queue.count < Self.laneMemoryLimit {
            lane.queue.append(event)
            queuedInMemory += 1
            if event.parked, lane.queue.count == 1 { parkedPositions.insert(event.position) }
        } else if lane.spilledAfter == nil {
            lane.spilledAfter = lane.queue.last?.position
        }
        lanes[event.stream] = lane
        if !wasReady, lane.isReady { ready.push(event.position, event.stream) }
    }

    /// For a stream in `refillsNeeded`: read the store's pending events of `stream` after
    /// the returned position, at most `laneMemoryLimit`.
    public func pendingNeeded(for stream: String) -> Int64? {
        lanes[stream]?.spilledAfter
    }

    /// The store's next pending events of `stream`, read after the store committed what the
    /// group recorded.
    public mutating func refill(_ stream: String, with events: [PendingEvent]) {
        refillsNeeded.remove(stream)
        guard var lane = lanes[stream], let after = lane.spilledAfter else { return }
        let wasReady = lane.isReady
        var last = after
        for event in events where event.position > last && lane.queue.count < Self.laneMemoryLimit {
            lane.queue.append(event)
            queuedInMemory += 1
            last = event.position
        }
        lane.spilledAfter = last >= lane.lastPosition ? nil : last
        if let head = lane.head, head.parked { parkedPositions.insert(head.position) }
        lanes[stream] = lane
        if !wasReady, lane.isReady, let head = lane.head { ready.push(head.position, stream) }
    }

    // MARK: Members

    /// A member joins (or, already a member, is heard from again), holding at most
    /// `maxInFlight` deliveries at once when it asks for fewer than the group's
    /// `maxInFlight` (a member that handles one event at a time asks for 1, so that what
    /// it cannot start yet goes to the others instead of waiting out `ackWaitMs`).
    public mutating func join(_ member: MemberId, now: Int64, maxInFlight: Int? = nil) {
        let limit = min(record.settings.maxInFlight, max(1, maxInFlight ?? record.settings.maxInFlight))
        members[member, default: GroupMember(lastSeen: now, limit: limit)].lastSeen = now
        members[member]?.limit = limit
    }

    /// Each member and the deliveries it may hold at once.
    public var memberLimits: [MemberId: Int] { members.mapValues(\.limit) }

    /// The member was heard from; false when it is not a member.
    @discardableResult
    public mutating func heard(from member: MemberId, now: Int64) -> Bool {
        guard members[member] != nil else { return false }
        members[member]?.lastSeen = now
        return true
    }

    /// The member leaves: what it holds is delivered again to the others.
    public mutating func leave(_ member: MemberId, reason: String = "the member left") {
        guard let gone = members.removeValue(forKey: member) else { return }
        for (position, flight) in inFlight where flight.member == member {
            fail(position, reason: reason)
        }
        for entry in gone.waiting { ready.push(entry.position, entry.stream) }
        affinity = affinity.filter { $0.value != member }
    }

    // MARK: Acknowledgements

    /// The member finished these deliveries. A position it does not hold is stale and
    /// changes nothing.
    public mutating func ack(_ positions: [Int64], from member: MemberId, now: Int64) -> AckOutcome {
        heard(from: member, now: now)
        var outcome = AckOutcome()
        for position in positions {
            guard let flight = inFlight[position], flight.member == member else {
                outcome.stale.append(position)
                continue
            }
            inFlight.removeValue(forKey: position)
            release(member)
            finishHead(of: flight.stream)
            counters.acked += 1
            outcome.acked.append(position)
        }
        moveCheckpoint()
        return outcome
    }

    /// The member failed this delivery; false (nothing changed) when it does not hold it.
    public mutating func nack(_ position: Int64, from member: MemberId, reason: String, now: Int64) -> Bool {
        heard(from: member, now: now)
        guard let flight = inFlight[position], flight.member == member else { return false }
        counters.nacked += 1
        fail(position, reason: reason)
        return true
    }

    /// Expires the deliveries whose wait is over and the members silent for too long.
    public mutating func tick(now: Int64) {
        for (member, state) in members where now - state.lastSeen >= memberTimeoutMilliseconds {
            leave(member, reason: "the member went silent")
        }
        for (position, flight) in inFlight where flight.deadline <= now {
            counters.expired += 1
            fail(position, reason: "not acknowledged within \(record.settings.ackWaitMilliseconds) ms")
        }
    }

    /// The earliest time `tick` has something to do, if any.
    public func nextDeadline() -> Int64? {
        let deliveries = inFlight.values.map(\.deadline).min()
        let silence = members.values.map(\.lastSeen).min().map { $0 + memberTimeoutMilliseconds }
        return [deliveries, silence].compactMap { $0 }.min()
    }

    // MARK: Parked events

    /// Gives a parked event `maxDeliver` more deliveries; false when `position` is not parked.
    public mutating func retry(_ position: Int64) -> Bool {
        guard parkedPositions.remove(position) != nil,
            let stream = lanes.first(where: { $0.value.head?.position == position })?.key,
            var lane = lanes[stream]
        else { return false }
        lane.queue[0].parked = false
        lane.queue[0].attempts = 0
        changes.updated[position] = lane.queue[0]
        lanes[stream] = lane
        ready.push(position, stream)
        return true
    }

    /// Finishes a parked event without delivering it again; false when `position` is not parked.
    public mutating func skip(_ position: Int64) -> Bool {
        guard parkedPositions.remove(position) != nil,
            let stream = lanes.first(where: { $0.value.head?.position == position })?.key
        else { return false }
        finishHead(of: stream)
        moveCheckpoint()
        return true
    }

    // MARK: Deliveries

    /// Hands out what the members have room for, smallest positions first, and records the
    /// attempts. Send them only after `takeChanges()` is committed.
    public mutating func takeDeliveries(now: Int64) -> [GroupDelivery] {
        var room = members.values.reduce(0) { $0 + max(0, $1.limit - $1.inFlight) }
        var deliveries: [GroupDelivery] = []
        while room > 0, let (position, stream) = ready.popMin() {
            guard var lane = lanes[stream], lane.isReady, var event = lane.head, event.position == position else {
                continue
            }
            guard let member = memberFor(stream), let state = members[member] else { break }
            guard state.hasRoom else {
                members[member]?.waiting.append((position, stream))
                continue
            }
            event.attempts += 1
            lane.queue[0] = event
            lane.inFlight = true
            lanes[stream] = lane
            members[member]?.inFlight += 1
            affinity[stream] = member
            inFlight[position] = (stream, member, now + Int64(record.settings.ackWaitMilliseconds))
            changes.updated[position] = event
            counters.delivered += 1
            if event.attempts > 1 { counters.redelivered += 1 }
            room -= 1
            deliveries.append(
                GroupDelivery(
                    group: record.name, member: member, position: position, attempt: event.attempts,
                    payload: event.payload))
        }
        if affinity.count > Self.affinityLimit { affinity = affinity.filter { lanes[$0.key] != nil } }
        return deliveries
    }

    /// A delivery that was never sent: its member's connection was gone when the groups
    /// process came to send it. It was no attempt, so it is taken back: the event is ready
    /// again with the attempts it had before (the store, which recorded the attempt before
    /// the send, is corrected with the turn's changes). False when `member` does not hold
    /// `position`. Call `leave` for the member afterwards: what it was really sent is failed
    /// there, and counted.
    @discardableResult
    public mutating func unsent(_ position: Int64, to member: MemberId) -> Bool {
        guard let flight = inFlight[position], flight.member == member, var lane = lanes[flight.stream],
            lane.head?.position == position
        else { return false }
        inFlight.removeValue(forKey: position)
        release(member)
        lane.inFlight = false
        lane.queue[0].attempts -= 1
        changes.updated[position] = lane.queue[0]
        lanes[flight.stream] = lane
        counters.delivered -= 1
        if lane.queue[0].attempts > 0 { counters.redelivered -= 1 }
        ready.push(position, flight.stream)
        return true
    }

    /// The member a stream goes to: the one it is with while that one lives, else the member
    /// with room holding the fewest deliveries (nil when there are no members).
    private func memberFor(_ stream: String) -> MemberId? {
        if let member = affinity[stream], members[member] != nil { return member }
        return members.min { left, right in
            if left.value.hasRoom != right.value.hasRoom { return left.value.hasRoom }
            return left.value.inFlight != right.value.inFlight
                ? left.value.inFlight < right.value.inFlight
                : left.key.bytes.lexicographicallyPrecedes(right.key.bytes)
        }?.key
    }

    // MARK: Bookkeeping

    /// The head of `stream` is done: removed from the store, and the next event may go.
    private mutating func finishHead(of stream: String) {
        guard var lane = lanes[stream], !lane.queue.isEmpty else { return }
        let done = lane.queue.removeFirst()
        lane.inFlight = false
        queuedInMemory -= 1
        pendingPositions.remove(done.position)
        changes.removed.append(done.position)
        if lane.isEmpty {
            lanes.removeValue(forKey: stream)
            return
        }
        if lane.queue.isEmpty { refillsNeeded.insert(stream) }
        if let head = lane.head {
            if head.parked { parkedPositions.insert(head.position) }
            if lane.isReady { ready.push(head.position, stream) }
        }
        lanes[stream] = lane
    }

    /// A delivery failed: delivered again, or parked after its last allowed attempt.
    private mutating func fail(_ position: Int64, reason: String) {
        guard let flight = inFlight.removeValue(forKey: position), var lane = lanes[flight.stream] else { return }
        release(flight.member)
        lane.inFlight = false
        lane.queue[0].lastFailure = reason
        if lane.queue[0].attempts >= record.settings.maxDeliver {
            lane.queue[0].parked = true
            parkedPositions.insert(position)
            counters.parked += 1
        } else {
            ready.push(position, flight.stream)
        }
        changes.updated[position] = lane.queue[0]
        lanes[flight.stream] = lane
    }

    /// The member holds one delivery fewer: the streams that waited for its room may go.
    private mutating func release(_ member: MemberId) {
        guard var state = members[member] else { return }
        state.inFlight -= 1
        for entry in state.waiting { ready.push(entry.position, entry.stream) }
        state.waiting.removeAll()
        members[member] = state
    }

    private mutating func moveCheckpoint() {
        let checkpoint = (pendingPositions.first ?? record.scanned + 1) - 1
        guard checkpoint != record.checkpoint else { return }
        record.checkpoint = checkpoint
        changes.checkpoint = checkpoint
    }
}
