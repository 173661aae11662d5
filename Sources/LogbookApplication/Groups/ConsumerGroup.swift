/// One consumer group's delivery rules, in memory and free of I/O: the caller feeds it the
/// log's events (with the outcomes the store recorded for them), members' messages and the
/// time, and writes what it records (`takeChanges()`) to the group store before it confirms
/// an acknowledgement or sends the deliveries of that turn.
///
/// The rules (docs/architecture.md, "Consumer groups"): at least once; within a stream in
/// position order with at most one event in flight; a stream stays with the member it was
/// given to while that member lives, and new streams go to the member holding the fewest
/// deliveries; an event not acknowledged within `ackWaitMilliseconds`, nacked, or held by a
/// member that left or went silent is delivered again, and after `maxDeliver` deliveries it
/// is parked: its stream waits, the others go on. The checkpoint is the position before the
/// smallest event not done.
///
/// What is durable: the checkpoint and, after it, each event done and each failed delivery
/// (`EventOutcome`); a delivery itself is not recorded, so after a restart an event whose
/// delivery was neither acknowledged nor failed goes again with the attempt number it had
/// before that delivery. A stream whose last change (an acknowledgement, a failure, a retry
/// or skip) is not durable yet delivers nothing: the caller seals the changes it takes into
/// a commit (`sealCommit()`) and says when that commit is durable (`commitDurable()`), and
/// only then do those streams go on; the other streams need not wait. Memory stays bounded:
/// the group takes events from the log only while fewer than `window` of them wait in memory
/// (parked ones aside), and a stream keeps at most `laneMemoryLimit` of its events in memory
/// (only the parked one while parked): the rest stay in the log and are read again
/// (`refillsNeeded`).
public struct ConsumerGroup {
    /// Events of one stream held in memory at most; the rest wait in the log.
    public static let laneMemoryLimit = 256
    /// Parked events held in memory beyond which the group takes nothing more from the log.
    public static let parkedLimit = 10_000

    public private(set) var record: GroupRecord
    /// Every event of the group's categories at or before this position has been taken from
    /// the log (offered), in this run; the checkpoint when the group was loaded.
    public private(set) var frontier: Int64
    /// Events waiting in memory (parked ones aside) beyond which the group takes nothing more
    /// from the log.
    public let window: Int
    /// Milliseconds of silence after which a member is taken to be gone.
    public let memberTimeoutMilliseconds: Int64
    public private(set) var counters = GroupCounters()
    /// Streams whose in-memory queue ran dry while the log holds more of their events: read
    /// them (`refillNeeded(for:)`) and hand them to `refill`.
    public private(set) var refillsNeeded: Set<String> = []
    /// Events held in memory.
    public private(set) var queuedInMemory = 0
    /// Events left in the log behind a full or parked lane.
    public private(set) var spilledCount = 0

    private var lanes: [String: StreamLane] = [:]
    private var ready = ReadyLanes()
    /// Each lane's low mark; the smallest valid one is just after the checkpoint.
    private var lowMarks = ReadyLanes()
    private var members: [MemberId: GroupMember] = [:]
    private var inFlight: [Int64: (stream: String, member: MemberId, deadline: Int64)] = [:]
    private var affinity: [String: MemberId] = [:]
    /// Parked events (each its lane's head), by position.
    private var parkedStreams: [Int64: String] = [:]
    private var outcomes = OutcomeBuffer()
    private var changes = GroupChanges.Progress()
    private let categories: Set<String>
    /// Streams whose last change is not durable yet, with the commit that carries it (the
    /// group's own count of commits): they deliver nothing until it is durable.
    private var unconfirmed: [String: Int] = [:]
    /// Ready streams held back while their last change is not durable.
    private var heldBack: [(position: Int64, stream: String)] = []
    /// The commit that carries the changes recorded now.
    private var openCommit = 1

    /// Affinities of streams with nothing pending are forgotten beyond this many.
    static let affinityLimit = 100_000

    /// A group as the store holds it: it takes the log's events after its checkpoint, with
    /// the outcomes the store holds for them (`outcomesNeeded(through:)`).
    public init(_ record: GroupRecord, window: Int = 4_096, memberTimeoutMilliseconds: Int64 = 5_000) {
        self.record = record
        frontier = record.checkpoint
        self.window = max(1, window)
        self.memberTimeoutMilliseconds = memberTimeoutMilliseconds
        categories = Set(record.categories)
        outcomes.loadedThrough = record.checkpoint
    }

    // MARK: What the group holds

    /// Whether the group takes more events from the log now.
    public var wantsEvents: Bool {
        queuedInMemory - parkedStreams.count < window && parkedStreams.count < Self.parkedLimit
    }
    public var memberCount: Int { members.count }
    public var inFlightCount: Int { inFlight.count }
    /// Events taken from the log and not done: in memory, or left in the log behind their lane.
    public var pendingCount: Int { queuedInMemory + spilledCount }
    public var parkedCount: Int { parkedStreams.count }
    public func isMember(_ member: MemberId) -> Bool { members[member] != nil }

    /// The parked events, in position order.
    public var parked: [PendingEvent] {
        parkedStreams.keys.sorted().compactMap { position in
            parkedStreams[position].flatMap { lanes[$0]?.head }
        }
    }

    /// What the group recorded since the last call, for the store: outcomes after the
    /// checkpoint only (the store forgets those at or before it).
    public mutating func takeChanges() -> GroupChanges.Progress {
        defer { changes = GroupChanges.Progress() }
        let checkpoint = record.checkpoint
        if changes.outcomes.contains(where: { $0.key <= checkpoint }) {
            changes.outcomes = changes.outcomes.filter { $0.key > checkpoint }
        }
        return changes
    }

    /// The changes taken so far (`takeChanges()`) go into the commit starting now; those
    /// recorded from now on go into the next one. One sealed commit at a time is not durable.
    public mutating func sealCommit() {
        openCommit += 1
    }

    /// The commit sealed last is durable: the streams that waited for it may deliver again.
    public mutating func commitDurable() {
        let durable = openCommit - 1
        unconfirmed = unconfirmed.filter { $0.value > durable }
        for entry in heldBack { ready.push(entry.position, entry.stream) }
        heldBack.removeAll()
    }

    // MARK: Outcomes from the store

    /// Where to read the store's outcomes from (after that position) before events through
    /// `position` are offered; nil when what was read covers them.
    public func outcomesNeeded(through position: Int64) -> Int64? {
        outcomes.loadedThrough < position ? outcomes.loadedThrough : nil
    }

    /// The store's next outcomes, in position order; `complete` when there are no more.
    public mutating func loadOutcomes(_ page: [EventOutcome], complete: Bool) {
        outcomes.load(page, complete: complete)
    }

    // MARK: Events from the log

    /// The log's events after `frontier`, in position order; every event of the group's
    /// categories up to `through` is among them. Read the store's outcomes through `through`
    /// first (`outcomesNeeded`): an event recorded done is skipped, one whose deliveries
    /// failed keeps its attempts and parking.
    public mutating func offer(_ events: [PendingEvent], through: Int64) {
        for event in events where event.position > frontier {
            guard categories.contains(RecordedEvent.category(ofStream: event.stream)) else { continue }
            var event = event
            if let outcome = outcomes.take(event.position) {
                if outcome.isDone { continue }
                event.attempts = outcome.attempts
                event.parked = outcome.parked
                event.lastFailure = outcome.lastFailure
            }
            take(event)
            frontier = event.position
        }
        if through > frontier { frontier = through }
        outcomes.forget(through: frontier)
        moveCheckpoint()
    }

    private mutating func take(_ event: PendingEvent) {
        // The lane is changed where it lies: a copy taken out and put back would copy its queue.
        let taken = lanes[event.stream, default: StreamLane()].take(event, memoryLimit: Self.laneMemoryLimit)
        if taken.inMemory {
            queuedInMemory += 1
            if event.parked, taken.isHead { parkedStreams[event.position] = event.stream }
        } else {
            spilledCount += 1
        }
        if taken.wasEmpty { lowMarks.push(event.position, event.stream) }
        if taken.becameReady { ready.push(event.position, event.stream) }
    }

    /// For a stream in `refillsNeeded`: read the log's events of `stream` after `after`, up
    /// to `through` (the last one the group took), at most `laneMemoryLimit` of them.
    public func refillNeeded(for stream: String) -> (after: Int64, through: Int64)? {
        guard let lane = lanes[stream], let after = lane.spilledAfter else { return nil }
        return (after, lane.lastPosition)
    }

    /// The log's events of `stream` after the position `refillNeeded` gave, in position
    /// order, from a read that covered the log through `readThrough`.
    public mutating func refill(_ stream: String, with events: [PendingEvent], readThrough: Int64) {
        guard var lane = lanes[stream], let after = lane.spilledAfter else {
            refillsNeeded.remove(stream)
            return
        }
        let wasReady = lane.isReady
        var last = after
        var taken = 0
        for event in events where event.stream == stream && event.position > last {
            guard event.position <= lane.lastPosition, lane.queue.count < Self.laneMemoryLimit,
                lane.head?.parked != true
            else { break }
            lane.queue.append(event)
            queuedInMemory += 1
            taken += 1
            last = event.position
        }
        let full = lane.queue.count >= Self.laneMemoryLimit || lane.head?.parked == true
        let covered = full ? last : max(last, readThrough)
        let left = covered >= lane.lastPosition ? 0 : max(0, lane.spilled - taken)
        spilledCount -= lane.spilled - left
        lane.spilled = left
        lane.spilledAfter = left == 0 ? nil : covered
        if let head = lane.head, head.parked { parkedStreams[head.position] = stream }
        guard !lane.isEmpty else {
            lanes.removeValue(forKey: stream)
            refillsNeeded.remove(stream)
            moveCheckpoint()
            return
        }
        if !lane.queue.isEmpty { refillsNeeded.remove(stream) }
        lanes[stream] = lane
        if let mark = lane.lowMark { lowMarks.push(mark, stream) }
        if !wasReady, lane.isReady, let head = lane.head { ready.push(head.position, stream) }
        moveCheckpoint()
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
        guard let stream = parkedStreams.removeValue(forKey: position), var lane = lanes[stream] else { return false }
        lane.queue[0].parked = false
        lane.queue[0].attempts = 0
        record(lane.queue[0].failedOutcome, of: stream)
        lanes[stream] = lane
        ready.push(position, stream)
        return true
    }

    /// Finishes a parked event without delivering it again; false when `position` is not parked.
    public mutating func skip(_ position: Int64) -> Bool {
        guard let stream = parkedStreams.removeValue(forKey: position) else { return false }
        finishHead(of: stream)
        moveCheckpoint()
        return true
    }

    // MARK: Deliveries

    /// Hands out what the members have room for, smallest positions first, leaving out the
    /// streams whose last change is not durable yet (`commitDurable()` lets them go on): they
    /// may be sent at once, whatever commit is under way.
    public mutating func takeDeliveries(now: Int64) -> [GroupDelivery] {
        var room = members.values.reduce(0) { $0 + max(0, $1.limit - $1.inFlight) }
        var deliveries: [GroupDelivery] = []
        while room > 0, let (position, stream) = ready.popMin() {
            guard let index = lanes.index(forKey: stream), lanes.values[index].isReady,
                var event = lanes.values[index].head, event.position == position
            else { continue }
            guard unconfirmed[stream] == nil else {
                heldBack.append((position, stream))
                continue
            }
            guard let member = memberFor(stream), let state = members[member] else { break }
            guard state.hasRoom else {
                members[member]?.waiting.append((position, stream))
                continue
            }
            event.attempts += 1
            // Changed where it lies, so that the queue is not copied.
            lanes.values[index].queue[0].attempts = event.attempts
            lanes.values[index].inFlight = true
            members[member]?.inFlight += 1
            affinity[stream] = member
            inFlight[position] = (stream, member, now + Int64(record.settings.ackWaitMilliseconds))
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
    /// again with the attempts it had before. False when `member` does not hold `position`.
    /// Call `leave` for the member afterwards: what it was really sent is failed there, and
    /// counted.
    @discardableResult
    public mutating func unsent(_ position: Int64, to member: MemberId) -> Bool {
        guard let flight = inFlight[position], flight.member == member, var lane = lanes[flight.stream],
            lane.head?.position == position
        else { return false }
        inFlight.removeValue(forKey: position)
        release(member)
        lane.inFlight = false
        lane.queue[0].attempts -= 1
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

    /// The head of `stream` is done: recorded so, and the next event may go.
    private mutating func finishHead(of stream: String) {
        // Changed where it lies, so that the queue is not copied.
        guard let index = lanes.index(forKey: stream), !lanes.values[index].queue.isEmpty else { return }
        let done = lanes.values[index].queue.removeFirst()
        lanes.values[index].inFlight = false
        queuedInMemory -= 1
        record(.done(done.position), of: stream)
        guard !lanes.values[index].isEmpty else {
            lanes.remove(at: index)
            return
        }
        let lane = lanes.values[index]
        if lane.queue.isEmpty { refillsNeeded.insert(stream) }
        if let head = lane.head {
            if head.parked { parkedStreams[head.position] = stream }
            if lane.isReady { ready.push(head.position, stream) }
        }
        if let mark = lane.lowMark { lowMarks.push(mark, stream) }
    }

    /// A delivery failed: delivered again, or parked after its last allowed attempt (its
    /// stream's later events then wait in the log, not in memory).
    private mutating func fail(_ position: Int64, reason: String) {
        guard let flight = inFlight.removeValue(forKey: position), var lane = lanes[flight.stream] else { return }
        release(flight.member)
        lane.inFlight = false
        lane.queue[0].lastFailure = reason
        if lane.queue[0].attempts >= record.settings.maxDeliver {
            lane.queue[0].parked = true
            parkedStreams[position] = flight.stream
            counters.parked += 1
            if lane.queue.count > 1 {
                let behind = lane.queue.count - 1
                lane.queue.removeLast(behind)
                queuedInMemory -= behind
                lane.spilledAfter = position
                lane.spilled += behind
                spilledCount += behind
            }
        } else {
            ready.push(position, flight.stream)
        }
        record(lane.queue[0].failedOutcome, of: flight.stream)
        lanes[flight.stream] = lane
    }

    private mutating func record(_ outcome: EventOutcome, of stream: String) {
        changes.outcomes[outcome.position] = outcome
        changes.isUrgent = true
        unconfirmed[stream] = openCommit
    }

    /// The member holds one delivery fewer: the streams that waited for its room may go.
    private mutating func release(_ member: MemberId) {
        guard var state = members[member] else { return }
        state.inFlight -= 1
        for entry in state.waiting { ready.push(entry.position, entry.stream) }
        state.waiting.removeAll()
        members[member] = state
    }

    /// The checkpoint: just before the smallest low mark of a lane, or the frontier when no
    /// lane holds anything. It only moves forwards.
    private mutating func moveCheckpoint() {
        while let top = lowMarks.min, lanes[top.stream]?.lowMark != top.position { _ = lowMarks.popMin() }
        if lowMarks.count > 4 * lanes.count + 1_024 { rebuildLowMarks() }
        let checkpoint = (lowMarks.min?.position ?? frontier + 1) - 1
        guard checkpoint > record.checkpoint else { return }
        record.checkpoint = checkpoint
        changes.checkpoint = checkpoint
    }

    private mutating func rebuildLowMarks() {
        lowMarks.removeAll()
        for (stream, lane) in lanes { if let mark = lane.lowMark { lowMarks.push(mark, stream) } }
    }
}

/// Outcomes read from the store for positions after a group's frontier, in position order,
/// and how far the store was read (`loadedThrough`: every outcome at or before it is here
/// or was taken).
private struct OutcomeBuffer {
    private var entries: [EventOutcome] = []
    private var start = 0
    var loadedThrough: Int64 = 0

    mutating func load(_ page: [EventOutcome], complete: Bool) {
        for outcome in page where outcome.position > loadedThrough && outcome.position > (entries.last?.position ?? 0) {
            entries.append(outcome)
        }
        loadedThrough = complete ? .max : max(loadedThrough, page.last?.position ?? loadedThrough)
    }

    /// The outcome of `position`, dropping those before it.
    mutating func take(_ position: Int64) -> EventOutcome? {
        forget(through: position - 1)
        guard start < entries.count, entries[start].position == position else { return nil }
        let outcome = entries[start]
        start += 1
        compact()
        return outcome
    }

    /// Drops the outcomes at or before `position`.
    mutating func forget(through position: Int64) {
        while start < entries.count, entries[start].position <= position { start += 1 }
        compact()
    }

    private mutating func compact() {
        if start == entries.count {
            entries.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 1_024 {
            entries.removeFirst(start)
            start = 0
        }
    }
}
