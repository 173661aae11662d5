import LogbookDomain

/// The groups process's use case: every consumer group, their members and their durable
/// progress in a `GroupStore`. Owned by one thread, which runs it in turns: it hands in the
/// log's events, members' messages and admin requests, then ends the turn one of two ways.
/// `finishTurn(now:)` commits what the turn recorded on the store and returns the
/// deliveries to send, replies to the turn's requests going out after it. `endTurn(now:)`
/// instead returns the changes to commit (`GroupCommit`), for the caller to write on a
/// thread of its own while turns go on, one commit at a time, and reports the outcome with
/// `committed(_:)` or `commitFailed(_:now:)`; the turn's replies wait for the commit that
/// `GroupTurn.repliesWaitFor` names. Either way a confirmed acknowledgement, a created group
/// or a recorded failure is durable, and a stream whose last change is not durable yet
/// delivers nothing (the deliveries returned may go at once). A turn that recorded only a
/// checkpoint moved by the log (events of other categories, or none) commits it within
/// `lazyCommitMilliseconds` instead: a restart before then reads those events again, and
/// skips them again.
///
/// The store holds no events: a group reads the log from its checkpoint (the caller's
/// follower, from `frontier(of:)`) and the store's outcomes as it goes (`offer`). When a
/// commit fails, the groups are read back from the store (what was not committed is
/// forgotten; members stay, their deliveries are made again) and the error is thrown for the
/// caller to answer the turn's requests with and to move its followers back. When even that
/// read fails, every request is answered `unavailable` and each turn reads the store again
/// until it can: no group is ever reported missing for a store's trouble.
public final class GroupDispatcher {
    private let store: any GroupStore
    /// Events a group holds in memory before it takes no more from the log.
    public let window: Int
    public let memberTimeoutMilliseconds: Int64
    private var groups: [GroupName: ConsumerGroup] = [:]
    private var pendingChanges = GroupChanges()
    /// Whether `pendingChanges` holds something that must be durable before a reply.
    private var pendingUrgent = false
    /// The commits handed out by `endTurn`, counted; the last one is `committing` or durable.
    private var sequence = 0
    /// The commit under way, if any.
    private var committing: Int?
    /// When the last commit was made (or the dispatcher started), monotonic milliseconds.
    private var lastCommit: Int64?
    /// Why the groups could not be read back after a failed commit; nil when they are in memory.
    private var unreadable: GroupStoreError?
    /// Members of each group when the store became unreadable, to join again once it is read.
    private var membersToRestore: [GroupName: [MemberId: Int]] = [:]
    /// Outcomes read per store read.
    static let outcomePage = 1_000
    /// The longest a checkpoint moved only by the log waits for a commit.
    public static let lazyCommitMilliseconds: Int64 = 1_000
    /// Outcome reads since the dispatcher started (for profiles).
    public private(set) var outcomeReads = 0
    /// Commits since the dispatcher started.
    public private(set) var commits = 0
    /// How many times the groups were read from the store: each time, every group reads the
    /// log again from its checkpoint (`frontier(of:)`).
    public private(set) var loads = 0

    /// Loads every group from `store`; each takes the log's events after its checkpoint.
    public init(store: any GroupStore, window: Int = 4_096, memberTimeoutMilliseconds: Int64 = 5_000)
        throws(GroupStoreError)
    {
        self.store = store
        self.window = window
        self.memberTimeoutMilliseconds = memberTimeoutMilliseconds
        try load()
    }

    private func load() throws(GroupStoreError) {
        var loaded: [GroupName: ConsumerGroup] = [:]
        for record in try store.groups() {
            loaded[record.name] = ConsumerGroup(
                record, window: window, memberTimeoutMilliseconds: memberTimeoutMilliseconds)
        }
        groups = loaded
        loads += 1
    }

    // MARK: Admin

    /// Every group, by name.
    public var names: [GroupName] { groups.keys.sorted() }

    public func record(of name: GroupName) -> GroupRecord? { groups[name]?.record }

    /// Creates a group from a new record (its checkpoint is where it starts: it takes the
    /// events of its categories after it).
    public func create(_ record: GroupRecord) throws(ServiceError) {
        try ensureReadable()
        let name = record.name
        guard groups[name] == nil else {
            throw ServiceError(
                .alreadyExists, "a group named \(name) exists already", details: [("group", .string(name.rawValue))])
        }
        pendingChanges.created.append(record)
        var group = ConsumerGroup(record, window: window, memberTimeoutMilliseconds: memberTimeoutMilliseconds)
        // A new group has no outcomes; the store may still hold those of a group of the same
        // name whose delete is not committed yet, which are not this group's.
        group.loadOutcomes([], complete: true)
        groups[name] = group
    }

    /// Deletes a group and its progress; its members are forgotten.
    public func delete(_ name: GroupName) throws(ServiceError) {
        _ = try group(name)
        groups.removeValue(forKey: name)
        pendingChanges.groups.removeValue(forKey: name)
        if let created = pendingChanges.created.firstIndex(where: { $0.name == name }) {
            pendingChanges.created.remove(at: created)
        } else {
            pendingChanges.deleted.append(name)
        }
    }

    public func summary(of name: GroupName) throws(ServiceError) -> GroupSummary {
        let group = try group(name)
        return GroupSummary(
            record: group.record, members: group.memberCount, inFlight: group.inFlightCount,
            pending: group.pendingCount, parked: group.parkedCount, counters: group.counters)
    }

    /// The group's parked events, in position order, at most `limit`.
    public func parked(in name: GroupName, limit: Int) throws(ServiceError) -> [PendingEvent] {
        Array(try group(name).parked.prefix(limit))
    }

    /// Gives a parked event its deliveries again.
    public func retry(_ position: Int64, in name: GroupName) throws(ServiceError) {
        try changing(name) { group throws(ServiceError) in
            guard group.retry(position) else { throw Self.notParked(position, name) }
        }
    }

    /// Finishes a parked event without delivering it again.
    public func skip(_ position: Int64, in name: GroupName) throws(ServiceError) {
        try changing(name) { group throws(ServiceError) in
            guard group.skip(position) else { throw Self.notParked(position, name) }
        }
    }

    // MARK: Members

    /// A member joins `name`, holding at most `maxInFlight` deliveries when it asks for
    /// fewer than the group allows.
    public func join(_ name: GroupName, member: MemberId, now: Int64, maxInFlight: Int? = nil) throws(ServiceError) {
        try changing(name) { $0.join(member, now: now, maxInFlight: maxInFlight) }
    }

    /// A member's heartbeat; `not_a_member` when the group does not know it (the groups
    /// process restarted, or the member was taken for gone): it should join again.
    public func heartbeat(_ name: GroupName, member: MemberId, now: Int64) throws(ServiceError) {
        try changing(name) { group throws(ServiceError) in
            guard group.heard(from: member, now: now) else { throw Self.notAMember(name) }
        }
    }

    public func leave(_ name: GroupName, member: MemberId) throws(ServiceError) {
        try changing(name) { $0.leave(member) }
    }

    /// A delivery of the last turn could not be sent (its member's connection is gone): it
    /// does not count as an attempt. Call `disconnected` for the member after its unsent
    /// deliveries.
    public func unsent(_ delivery: GroupDelivery) {
        groups[delivery.group]?.unsent(delivery.position, to: delivery.member)
    }

    /// The member's connection is gone: it leaves every group it was in.
    public func disconnected(_ member: MemberId) {
        for name in groupNames where groups[name]?.isMember(member) == true {
            groups[name]?.leave(member, reason: "the member's connection is gone")
        }
    }

    public func ack(_ positions: [Int64], in name: GroupName, from member: MemberId, now: Int64)
        throws(ServiceError) -> AckOutcome
    {
        try changing(name) { $0.ack(positions, from: member, now: now) }
    }

    /// A member failed a delivery; `stale_delivery` when it does not hold it.
    public func nack(_ position: Int64, in name: GroupName, from member: MemberId, reason: String, now: Int64)
        throws(ServiceError)
    {
        try changing(name) { group throws(ServiceError) in
            guard group.nack(position, from: member, reason: reason, now: now) else {
                throw ServiceError(
                    .staleDelivery, "position \(position) is not delivered to this member of \(name)",
                    details: [("group", .string(name.rawValue)), ("position", .int(Int(position)))])
            }
        }
    }

    // MARK: The log

    /// Whether `name` takes more events from the log now.
    public func wantsEvents(_ name: GroupName) -> Bool { groups[name]?.wantsEvents ?? false }

    /// Where `name`'s reading of the log stands: every event of its categories at or before
    /// it was offered (after a load, its checkpoint).
    public func frontier(of name: GroupName) -> Int64? { groups[name]?.frontier }

    /// The log's events after the group's frontier, in order, through `through`, with the
    /// store's outcomes for them read first. When the store cannot be read, nothing is
    /// offered and the error is thrown: read the log again from `frontier(of:)`.
    public func offer(_ events: [PendingEvent], through: Int64, to name: GroupName) throws(GroupStoreError) {
        // Out of the dictionary while it changes, so that its storage is not copied.
        guard var group = groups.removeValue(forKey: name) else { return }
        defer { groups[name] = group }
        while let after = group.outcomesNeeded(through: through) {
            let page = try store.outcomes(of: name, after: after, limit: Self.outcomePage)
            outcomeReads += 1
            group.loadOutcomes(page, complete: page.count < Self.outcomePage)
        }
        group.offer(events, through: through)
    }

    /// Whether some group has streams to read again from the log (`refillsNeeded`).
    public var needsRefills: Bool { groups.values.contains { !$0.refillsNeeded.isEmpty } }

    /// Per group, the streams whose memory ran dry while the log holds more of their events:
    /// read the log once for all of them (`LogRefill`) and hand what was read to `refill`.
    public var refillsNeeded: [LogRefill] {
        var refills: [LogRefill] = []
        for (name, group) in groups where !group.refillsNeeded.isEmpty {
            var after = Int64.max
            var through: Int64 = 0
            var streams: Set<String> = []
            for stream in group.refillsNeeded {
                guard let range = group.refillNeeded(for: stream) else { continue }
                after = min(after, range.after)
                through = max(through, range.through)
                streams.insert(stream)
            }
            guard !streams.isEmpty else { continue }
            refills.append(
                LogRefill(
                    group: name, categories: group.record.categories, streams: streams, after: after, through: through))
        }
        return refills
    }

    /// The log's events read for `refill`, from `refill.after + 1` through `readThrough`, in
    /// order (those of other streams may be left out): each of its streams takes its own.
    public func refill(_ refill: LogRefill, with events: [PendingEvent], readThrough: Int64) {
        var byStream: [String: [PendingEvent]] = [:]
        for event in events where refill.streams.contains(event.stream) {
            byStream[event.stream, default: []].append(event)
        }
        guard var group = groups.removeValue(forKey: refill.group) else { return }
        defer { groups[refill.group] = group }
        for stream in refill.streams {
            group.refill(stream, with: byStream[stream] ?? [], readThrough: readThrough)
        }
    }

    // MARK: Turns

    /// Whether a commit handed out by `endTurn` has had no outcome reported yet.
    public var isCommitting: Bool { committing != nil }

    /// The earliest monotonic time at which a turn has something to do: a delivery or a
    /// member to expire, or a checkpoint to commit (none while a commit is under way: its
    /// outcome ends the wait).
    public func nextDeadline() -> Int64? {
        var deadline = groups.values.compactMap { $0.nextDeadline() }.min()
        if !pendingChanges.isEmpty, committing == nil, let lastCommit {
            deadline = min(deadline ?? .max, lastCommit + Self.lazyCommitMilliseconds)
        }
        return deadline
    }

    /// Ends a turn: expires what is due, commits what the turn recorded on the store (a
    /// checkpoint moved only by the log may wait) and hands out deliveries. The deliveries
    /// returned may be sent, and the turn's replies given, once this returns.
    public func finishTurn(now: Int64) throws(GroupStoreError) -> [GroupDelivery] {
        if let commit = try prepareTurn(now: now) {
            do {
                try store.commit(commit.changes)
            } catch {
                try commitFailed(error, now: now)
            }
            committed(commit)
        }
        return takeDeliveries(now: now)
    }

    /// Ends a turn without writing: expires what is due and hands out deliveries of the
    /// streams that wait for no commit, and, when a commit is due and none is under way, the
    /// changes to commit (one commit at a time: report its outcome before the next). The
    /// deliveries may be sent at once; the turn's replies once `repliesWaitFor` is durable.
    public func endTurn(now: Int64) throws(GroupStoreError) -> GroupTurn {
        let commit = try prepareTurn(now: now)
        let waitFor = pendingUrgent ? sequence + 1 : committing ?? sequence
        return GroupTurn(deliveries: takeDeliveries(now: now), commit: commit, repliesWaitFor: waitFor)
    }

    /// `commit` is durable: the streams that waited for it deliver again.
    public func committed(_ commit: GroupCommit) {
        guard committing == commit.sequence else { return }
        committing = nil
        commits += 1
        for name in groupNames { groups[name]?.commitDurable() }
    }

    /// The commit under way failed: nothing of it was written. The groups are read back from
    /// the store (what was not committed is forgotten, members stay) and `error` is thrown,
    /// for the caller to refuse the replies that waited and to read the log again from each
    /// group's checkpoint.
    public func commitFailed(_ error: GroupStoreError, now: Int64) throws(GroupStoreError) {
        committing = nil
        try recover(from: error, now: now)
    }

    /// The commit due at this turn, if any, with the changes it carries sealed; first, reads
    /// the groups back if they could not be, and expires what is due.
    private func prepareTurn(now: Int64) throws(GroupStoreError) -> GroupCommit? {
        if let unreadable {
            do {
                try load()
            } catch {
                throw unreadable
            }
            self.unreadable = nil
            rejoin(membersToRestore, now: now)
            membersToRestore = [:]
        }
        if lastCommit == nil { lastCommit = now }
        pendingUrgent = pendingUrgent || !pendingChanges.created.isEmpty || !pendingChanges.deleted.isEmpty
        for name in groupNames {
            groups[name]?.tick(now: now)
            guard let progress = groups[name]?.takeChanges(), !progress.isEmpty || progress.isUrgent else {
                continue
            }
            pendingUrgent = pendingUrgent || progress.isUrgent
            pendingChanges.groups[name, default: GroupChanges.Progress()].merge(progress)
        }
        let due = pendingUrgent || now - (lastCommit ?? now) >= Self.lazyCommitMilliseconds
        guard due, committing == nil else { return nil }
        let changes = pendingChanges
        // Replies were told to wait for the next commit: it comes, though what it was to carry
        // may have been withdrawn meanwhile (a group created, then deleted).
        let promised = pendingUrgent
        pendingChanges = GroupChanges()
        pendingUrgent = false
        lastCommit = now
        for name in groupNames { groups[name]?.sealCommit() }
        guard !changes.isEmpty || promised else {
            for name in groupNames { groups[name]?.commitDurable() }
            return nil
        }
        sequence += 1
        committing = sequence
        return GroupCommit(sequence: sequence, changes: changes)
    }

    private func takeDeliveries(now: Int64) -> [GroupDelivery] {
        var deliveries: [GroupDelivery] = []
        for name in groupNames { deliveries += groups[name]?.takeDeliveries(now: now) ?? [] }
        return deliveries
    }

    /// After a failed commit: the groups as the store has them, with the same members (each
    /// reads the log again from its checkpoint).
    private func recover(from error: GroupStoreError, now: Int64) throws(GroupStoreError) {
        let members = groups.mapValues { $0.memberLimits }
        pendingChanges = GroupChanges()
        pendingUrgent = false
        do {
            try load()
        } catch {
            groups = [:]
            unreadable = error
            membersToRestore = members
            throw error
        }
        rejoin(members, now: now)
        throw error
    }

    private func rejoin(_ members: [GroupName: [MemberId: Int]], now: Int64) {
        for (name, limits) in members {
            for (member, limit) in limits { groups[name]?.join(member, now: now, maxInFlight: limit) }
        }
    }

    /// Refuses a request while the groups could not be read back from the store.
    private func ensureReadable() throws(ServiceError) {
        guard unreadable == nil else { throw ServiceError(.unavailable, "the group store is unavailable; try again") }
    }

    // MARK: Helpers

    /// The groups' names as an array of their own: a loop over `groups.keys` would keep the
    /// dictionary shared while it changes a group in place, and so copy every group it touches.
    private var groupNames: [GroupName] { Array(groups.keys) }

    private func group(_ name: GroupName) throws(ServiceError) -> ConsumerGroup {
        try ensureReadable()
        guard let group = groups[name] else { throw Self.unknownGroup(name) }
        return group
    }

    private func changing<Result>(_ name: GroupName, _ body: (inout ConsumerGroup) throws(ServiceError) -> Result)
        throws(ServiceError) -> Result
    {
        try ensureReadable()
        guard var group = groups.removeValue(forKey: name) else { throw Self.unknownGroup(name) }
        defer { groups[name] = group }
        return try body(&group)
    }

    public static func unknownGroup(_ name: GroupName) -> ServiceError {
        ServiceError(.unknownGroup, "there is no group named \(name)", details: [("group", .string(name.rawValue))])
    }

    static func notAMember(_ name: GroupName) -> ServiceError {
        ServiceError(
            .notAMember, "this connection is not a member of \(name): join it again",
            details: [("group", .string(name.rawValue))])
    }

    static func notParked(_ position: Int64, _ name: GroupName) -> ServiceError {
        ServiceError(
            .notFound, "no parked event at position \(position) in \(name)",
            details: [("group", .string(name.rawValue)), ("position", .int(Int(position)))])
    }
}

/// The groups' changes of one or more turns, to write in one transaction (`GroupStore.commit`)
/// while turns go on: `sequence` counts the dispatcher's commits.
public struct GroupCommit: Sendable, Equatable {
    public let sequence: Int
    public let changes: GroupChanges
}

/// How a turn ended (`GroupDispatcher.endTurn`): deliveries to send now, the commit to start
/// (if one is due and none is under way), and the commit the turn's replies wait for: they
/// go once every commit up to `repliesWaitFor` is durable (at once when it is none under way
/// or to come).
public struct GroupTurn: Sendable, Equatable {
    public let deliveries: [GroupDelivery]
    public let commit: GroupCommit?
    public let repliesWaitFor: Int
}

/// A read of the log a group needs to refill the lanes of `streams`: its categories' events
/// after `after` (the earliest of those lanes' positions), up to `through` (the last one of
/// those streams the group took).
public struct LogRefill: Sendable, Equatable {
    public let group: GroupName
    public let categories: [String]
    public let streams: Set<String>
    public let after: Int64
    public let through: Int64
}
