/// Sealing a batch's personal values on the way into the log, and opening them on the way
/// out (see `PersonalDataVault`'s promises), byte for byte in place (`PayloadSealing`).
extension PersonalDataVault {
    /// A batch with its personal values sealed, and the requests left out of it.
    public struct SealedBatch {
        /// The requests to append, sealed, in their order in the batch given.
        public var requests: [AppendRequest]
        /// The index in the batch given of each request left out, with the forgotten user one
        /// of its events belongs to (decided on a state another process has since changed).
        public var refused: [Int: String]
    }

    /// `batch` with every personal value sealed (see the type's promises).
    public func seal(_ batch: [AppendRequest]) throws(EventStoreError) -> SealedBatch {
        // Each event with personal fields: where it is, whose it is, where its values lie.
        var personal: [(request: Int, event: Int, owner: String, layout: PersonalPayload)] = []
        // By index, not by element: a copy of a request or an event retains each of its fields.
        for requestIndex in batch.indices {
            for eventIndex in batch[requestIndex].events.indices {
                guard let fields = PersonalFields.fields(ofType: batch[requestIndex].events[eventIndex].type) else {
                    continue
                }
                var data = batch[requestIndex].events[eventIndex].data
                let found: (owner: String, layout: PersonalPayload)? = data.withUTF8 { bytes in
                    guard let layout = PersonalPayload(bytes, personal: fields), let owner = layout.ownerId(in: bytes)
                    else { return nil }
                    return (owner, layout)
                }
                guard let found else {
                    let type = batch[requestIndex].events[eventIndex].type
                    throw .invalidRequest("a \(type) payload must be a JSON object with a string userId")
                }
                personal.append((requestIndex, eventIndex, found.owner, found.layout))
            }
        }
        guard !personal.isEmpty else { return SealedBatch(requests: batch, refused: [:]) }
        let states = try keys(for: personal.lazy.map(\.owner))
        var requests = batch
        var refused: [Int: String] = [:]
        for (item, state) in zip(personal, states) where refused[item.request] == nil {
            guard case .key(let key) = state else {
                refused[item.request] = item.owner
                continue
            }
            var data = batch[item.request].events[item.event].data
            var eventId = batch[item.request].events[item.event].eventId
            requests[item.request].events[item.event].data = data.withUTF8 { bytes in
                eventId.withUTF8 { eventId in
                    PayloadSealing.seal(bytes, layout: item.layout, eventId: eventId, key: key, nonces: nonces)
                }
            }
        }
        if !refused.isEmpty {
            requests = requests.indices.filter { refused[$0] == nil }.map { requests[$0] }
        }
        return SealedBatch(requests: requests, refused: refused)
    }

    // MARK: Opening

    /// What opening a stored payload takes: where its values lie and what to open them
    /// with; nil when it holds no sealed value and is served as stored.
    private func openingOf(type: UnsafeBufferPointer<UInt8>, data: UnsafeBufferPointer<UInt8>, position: Int64)
        throws(EventStoreError) -> (layout: PersonalPayload, opening: PayloadSealing.Opening)?
    {
        guard let fields = PersonalFields.fields(ofType: type), let layout = PersonalPayload(data, personal: fields),
            layout.holdsSealedValue
        else { return nil }
        guard let owner = layout.ownerId(in: data) else {
            throw .unreadableEvent(position: position, reason: "sealed personal values without a string userId")
        }
        switch try state(of: owner) {
        case .key(let key): return (layout, .key(key))
        case .forgotten: return (layout, .forgotten)
        case .none: throw .unreadableEvent(position: position, reason: "its user has no data key in the key store")
        }
    }

    /// The payload of a stored event with its personal values opened (or forgotten); nil
    /// when it holds no sealed value and is served as stored.
    public func open(
        type: UnsafeBufferPointer<UInt8>, eventId: UnsafeBufferPointer<UInt8>, data: UnsafeBufferPointer<UInt8>,
        position: Int64
    ) throws(EventStoreError) -> [UInt8]? {
        guard let (layout, opening) = try openingOf(type: type, data: data, position: position) else { return nil }
        var failure: EventStoreError?
        let opened = [UInt8](unsafeUninitializedCapacity: PayloadSealing.openedCapacity(data.count)) { out, count in
            do throws(EventStoreError) {
                count = try PayloadSealing.open(
                    data, layout: layout, eventId: eventId, opening: opening, position: position, into: out)
            } catch {
                failure = error
                count = 0
            }
        }
        if let failure { throw failure }
        return opened
    }

    /// Lends `body` the payload of a stored event with its personal values opened (or
    /// forgotten), in memory that lasts only for the call; `data` itself when it holds no
    /// sealed value.
    public func withOpened<R>(
        type: UnsafeBufferPointer<UInt8>, eventId: UnsafeBufferPointer<UInt8>, data: UnsafeBufferPointer<UInt8>,
        position: Int64, _ body: (UnsafeBufferPointer<UInt8>) -> R
    ) throws(EventStoreError) -> R {
        guard let (layout, opening) = try openingOf(type: type, data: data, position: position) else {
            return body(data)
        }
        let result = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: PayloadSealing.openedCapacity(data.count))
        { out -> Result<R, EventStoreError> in
            do throws(EventStoreError) {
                let count = try PayloadSealing.open(
                    data, layout: layout, eventId: eventId, opening: opening, position: position, into: out)
                return .success(body(UnsafeBufferPointer(rebasing: out[..<count])))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// `event` with its personal values opened (or forgotten).
    public func open(_ event: RecordedEvent) throws(EventStoreError) -> RecordedEvent {
        var type = event.type
        var eventId = event.eventId
        var data = event.data
        let opened: Result<String?, EventStoreError> = type.withUTF8 { type in
            eventId.withUTF8 { eventId in
                data.withUTF8 { data in
                    Result { () throws(EventStoreError) -> String? in
                        guard let (layout, opening) = try openingOf(type: type, data: data, position: event.position)
                        else { return nil }
                        var failure: EventStoreError?
                        let text = String(unsafeUninitializedCapacity: PayloadSealing.openedCapacity(data.count)) {
                            out in
                            do throws(EventStoreError) {
                                return try PayloadSealing.open(
                                    data, layout: layout, eventId: eventId, opening: opening,
                                    position: event.position, into: out)
                            } catch {
                                failure = error
                                return 0
                            }
                        }
                        if let failure { throw failure }
                        return text
                    }
                }
            }
        }
        guard let text = try opened.get() else { return event }
        var result = event
        result.data = text
        return result
    }
}
