/// An event log whose personal values are sealed on the way in and opened on the way out
/// (`PersonalDataVault`), over any other `EventStore`: what a worker, a feed process and
/// every reader of theirs use, so that no personal value reaches the log in clear and
/// every reply, feed message and `ReadLog` page carries plain (or forgotten) values.
///
/// Keeps every promise of the store beneath, and adds: the events a committed append
/// returns carry their payloads exactly as given; and a batch that appends a user's
/// `UserForgotten` marks the forgetting as begun before it is appended and destroys the
/// user's key once it has committed (or is found already recorded), before `append`
/// returns, so no reply confirms a forgetting whose key still exists.
///
/// Processes sharing a log and a key store never serve a user another process forgot from
/// their caches: every read (`read`, `readStream`, `visitEvents`, `commandRecord`,
/// `readWholeStreams`, and the record of a duplicate in `append`) first drops the keys
/// destroyed anywhere since the last one (`PersonalDataVault.catchUpWithDestroyedKeys`), so
/// a read that begins after a `ForgetUser` reply serves that user's values as forgotten,
/// whichever events it reads; and every `UserForgotten` it reads, whoever wrote it, takes
/// that user's key out of the cache at once (`PersonalDataVault.forgettingWasRead`). A key
/// store that cannot answer the catch-up fails the read (`unavailable`), never serves it
/// from a cache that may be stale.
public final class ProtectedEventStore: EventStore {
    /// The type of the event that forgets a user.
    public static let forgettingType = "UserForgotten"

    /// The store beneath, which holds personal values sealed.
    public let base: any EventStore
    private let vault: PersonalDataVault

    public init(_ base: any EventStore, vault: PersonalDataVault) {
        self.base = base
        self.vault = vault
    }

    public func append(_ batch: [AppendRequest]) throws(EventStoreError) -> [AppendResult] {
        try send(batch).results()
    }

    public var sendsAhead: Bool { base.sendsAhead }

    /// Seals the batch and sends it to the store beneath; its results are opened once they come.
    public func send(_ batch: [AppendRequest]) throws(EventStoreError) -> AppendInFlight {
        for request in batch {
            for event in request.events where event.type == Self.forgettingType {
                try vault.beginForgetting(try Self.userId(ofForgetting: event.data))
            }
        }
        // No catch-up before sealing: a request sealed with a key another process destroyed
        // meanwhile conflicts on its stream's version, which the `UserForgotten` moved on (and
        // what such a key sealed opens for nobody).
        let sealing = try vault.seal(batch)
        let sealed = sealing.requests
        let sending = sealed.isEmpty ? AppendInFlight.answered(.success([])) : try base.send(sealed)
        return sending.then { [self] answer throws(EventStoreError) in
            try opened(answer(), of: batch, sealed: sealed, refused: sealing.refused)
        }
    }

    /// The results of a batch from those of its sealed requests (`appended`): each refused
    /// request's conflict in its place, and the events of each committed or duplicate one
    /// as the caller gave them or as any reader sees them.
    private func opened(
        _ appended: [AppendResult], of batch: [AppendRequest], sealed: [AppendRequest], refused: [Int: String]
    ) throws(EventStoreError) -> [AppendResult] {
        // Each request's result, and where its sealed form is in `sealed` (none when left out).
        var results: [AppendResult] = []
        var positions: [Int?] = []
        results.reserveCapacity(batch.count)
        positions.reserveCapacity(batch.count)
        var next = appended.makeIterator()
        var position = 0
        for (index, request) in batch.enumerated() {
            if let userId = refused[index] {
                results.append(.conflict(try Self.conflict(request, forgotten: userId, base)))
                positions.append(nil)
            } else if let result = next.next() {
                results.append(result)
                positions.append(position)
                position += 1
            }
        }
        guard results.count == batch.count else {
            throw .failed("the log answered \(appended.count) of \(sealed.count) requests")
        }
        var opened: [AppendResult] = []
        opened.reserveCapacity(results.count)
        var caughtUp = false
        for (index, result) in results.enumerated() {
            let position = positions[index]
            switch result {
            case .committed(.appended(var committed)):
                try finishForgetting(in: committed.events)
                // The payloads as given; those of a command that forgot its user as any reader
                // sees them from now on (so a retry gets the same bytes).
                let forgets = committed.events.contains { $0.type == Self.forgettingType }
                for offset in committed.events.indices where offset < batch[index].events.count {
                    committed.events[offset].data = batch[index].events[offset].data
                    if forgets, let position {
                        committed.events[offset] = try vault.open(
                            committed.events[offset].withData(sealed[position].events[offset].data))
                    }
                }
                opened.append(.committed(.appended(committed)))
            case .duplicate(let record):
                if !caughtUp {
                    try vault.catchUpWithDestroyedKeys()
                    caughtUp = true
                }
                let record = try open(record)
                try finishForgetting(in: record.events)
                opened.append(.duplicate(record))
            case .committed(.answered), .conflict, .abandoned, .unreadableRecord:
                opened.append(result)
            }
        }
        return opened
    }

    /// The conflict a request left out of a batch answers: it was decided on a state of
    /// `userId`'s stream from before another process forgot the user, so the caller decides
    /// it again on what the log holds now.
    private static func conflict(_ request: AppendRequest, forgotten userId: String, _ base: any EventStore)
        throws(EventStoreError) -> VersionConflict
    {
        let stream = "user-\(userId)"
        let actual = try base.readWholeStream(stream).last?.version ?? 0
        return VersionConflict(stream: stream, expected: request.expectations[stream] ?? .any, actual: actual)
    }

    /// Destroys the key of every user whose `UserForgotten` is among `events`.
    private func finishForgetting(in events: [RecordedEvent]) throws(EventStoreError) {
        for event in events where event.type == Self.forgettingType {
            try vault.destroy(try Self.userId(ofForgetting: event.data))
        }
    }

    /// Finishes every forgetting that began and whose `UserForgotten` is in the log (a
    /// process that stopped between the commit and the key's destruction). Called when a
    /// worker starts; answers the users it forgot.
    public func finishUnfinishedForgetting() throws(EventStoreError) -> [String] {
        var finished: [String] = []
        for userId in try vault.unfinishedForgetting() {
            let events = try base.readWholeStream("user-\(userId)")
            if events.contains(where: { $0.type == Self.forgettingType }) {
                try vault.destroy(userId)
                finished.append(userId)
            }
        }
        return finished
    }

    private static func userId(ofForgetting data: String) throws(EventStoreError) -> String {
        var data = data
        let userId: String? = data.withUTF8 { bytes in
            PersonalPayload(bytes, personal: [])?.ownerId(in: bytes)
        }
        guard let userId else { throw .invalidRequest("a UserForgotten payload must name its userId") }
        return userId
    }

    private func open(_ record: CommandRecord) throws(EventStoreError) -> CommandRecord {
        guard case .appended(var committed) = record else { return record }
        committed.events = try open(committed.events)
        return .appended(committed)
    }

    private func open(_ events: [RecordedEvent]) throws(EventStoreError) -> [RecordedEvent] {
        for event in events where event.type == Self.forgettingType {
            noteForgetting(event.data)
        }
        var opened = events
        for index in opened.indices {
            opened[index] = try vault.open(opened[index])
        }
        return opened
    }

    /// Tells the vault that the `UserForgotten` with payload `data` is in the log.
    private func noteForgetting(_ data: String) {
        if let userId = try? Self.userId(ofForgetting: data) { vault.forgettingWasRead(userId) }
    }

    private static let forgettingTypeBytes = Array(forgettingType.utf8)

    public func readStream(_ stream: String, fromVersion: Int, limit: Int) throws(EventStoreError) -> [RecordedEvent] {
        try vault.catchUpWithDestroyedKeys()
        return try open(try base.readStream(stream, fromVersion: fromVersion, limit: limit))
    }

    public func read(fromPosition: Int64, limit: Int, categories: Set<String>?) throws(EventStoreError)
        -> [RecordedEvent]
    {
        try vault.catchUpWithDestroyedKeys()
        return try open(try base.read(fromPosition: fromPosition, limit: limit, categories: categories))
    }

    public func visitEvents(
        fromPosition: Int64, limit: Int, categories: Set<String>?, _ body: (StoredEventBytes) -> Bool
    ) throws(EventStoreError) {
        try vault.catchUpWithDestroyedKeys()
        var failure: EventStoreError?
        try base.visitEvents(fromPosition: fromPosition, limit: limit, categories: categories) { event in
            if Self.forgettingTypeBytes.withUnsafeBufferPointer({ PersonalPayload.equal($0, event.type) }) {
                noteForgetting(StoredEventBytes.text(event.data))
            }
            do throws(EventStoreError) {
                return try vault.withOpened(
                    type: event.type, eventId: event.eventId, data: event.data, position: event.position
                ) { data in
                    var event = event
                    event.data = data
                    return body(event)
                }
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
    }

    public func headPosition() throws(EventStoreError) -> Int64 {
        try base.headPosition()
    }

    public func commandRecord(_ commandId: String) throws(EventStoreError) -> CommandRecord? {
        try vault.catchUpWithDestroyedKeys()
        return try base.commandRecord(commandId).map { record throws(EventStoreError) in try open(record) }
    }

    public func readWholeStreams(_ streams: [String]) throws(EventStoreError) -> [String: [RecordedEvent]] {
        try vault.catchUpWithDestroyedKeys()
        var found = try base.readWholeStreams(streams)
        for (stream, events) in found {
            found[stream] = try open(events)
        }
        return found
    }
}

extension RecordedEvent {
    /// The event with `data` as its payload.
    fileprivate func withData(_ data: String) -> RecordedEvent {
        var event = self
        event.data = data
        return event
    }
}
