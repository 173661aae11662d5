public import LogbookDomain

/// An event of the log, decoded, with what a projection needs of its envelope.
public struct ProjectedEvent: Sendable, Equatable {
    public var position: Int64
    public var recordedAt: Timestamp
    public var event: DomainEvent

    public init(position: Int64, recordedAt: Timestamp, event: DomainEvent) {
        self.position = position
        self.recordedAt = recordedAt
        self.event = event
    }
}

/// Folds events of the log into the read models' rows. Pure: each event becomes at most one
/// `ReadModelChange`, decided from the event alone (events carry what they change, stock
/// included), and the stores only carry the changes out, inside one transaction per batch
/// together with the checkpoint.
///
/// - `UserRegistered`, `PostCreated`, `ProductAdded`, `OrderPlaced` insert a row (an insert
///   leaves an existing row with that id alone: a valid log never reuses an id, and the
///   first one wins).
/// - `UserProfileUpdated` (the changed fields), `SubscriptionChanged`, `PostEdited`,
///   `ProductUpdated`, `ProductRestocked` and `ProductPurchased` (the stock the event
///   records) update the row and its `updatedAt`; an update of a row that does not exist
///   (one deleted before, which a valid log never updates) changes nothing.
/// - `UserDeleted`, `UserForgotten`, `PostDeleted`, `ProductRemoved` remove the row: it
///   answers `not_found` and leaves every list (a forgotten user's posts stay, with their
///   `authorId`).
/// - A `UserRegistered` or `UserProfileUpdated` whose personal values were forgotten
///   changes no row: its user's stream ends in `UserForgotten`.
/// - Events of categories without a read model (`email`, the internal claim streams, and
///   any other) are skipped without being decoded; they still advance the checkpoint.
public enum Projector {
    /// The stream categories that have read models.
    public static let projectedCategories: Set<String> = ["user", "post", "product", "order"]

    /// Checks a batch against the checkpoint without decoding it. Throws for an event at or
    /// below the checkpoint, positions that do not strictly increase, an event beyond
    /// `through`, or `through` below the checkpoint.
    public static func check(_ events: some EventBatch, through: Int64, checkpoint: Int64)
        throws(ReadModelStoreError)
    {
        try check(
            positions: (0..<events.count).lazy.map(events.position(at:)), through: through, checkpoint: checkpoint)
    }

    /// `check` of the positions of a batch, in order.
    private static func check(positions: some Sequence<Int64>, through: Int64, checkpoint: Int64)
        throws(ReadModelStoreError)
    {
        guard through >= checkpoint else { throw .checkpointWouldMoveBack(through: through, checkpoint: checkpoint) }
        var previous: Int64?
        for position in positions {
            if position <= checkpoint { throw .alreadyApplied(position: position, checkpoint: checkpoint) }
            if let previous, position <= previous { throw .outOfOrder(position: position, previous: previous) }
            if position > through { throw .beyondTarget(position: position, through: through) }
            previous = position
        }
    }

    /// Checks a batch (see `check`) and decodes the events that have read models. Nothing is
    /// written; it throws for a batch `check` refuses or an event that cannot be decoded.
    public static func prepare(_ events: [RecordedEvent], through: Int64, checkpoint: Int64)
        throws(ReadModelStoreError) -> [ProjectedEvent]
    {
        try check(events, through: through, checkpoint: checkpoint)
        return try decode(events[...])
    }

    /// Decodes the events of `events` that have read models, in order.
    public static func decode(_ events: ArraySlice<RecordedEvent>) throws(ReadModelStoreError) -> [ProjectedEvent] {
        var decoded: [ProjectedEvent] = []
        decoded.reserveCapacity(events.count)
        for recorded in events {
            if let event = try decode(recorded) { decoded.append(event) }
        }
        return decoded
    }

    /// The decoded event, or nil for a category without a read model. Throws for an event
    /// that cannot be decoded, or whose payload names another stream than the one it is on.
    public static func decode(_ recorded: RecordedEvent) throws(ReadModelStoreError) -> ProjectedEvent? {
        guard projectedCategories.contains(recorded.category) else { return nil }
        let event: DomainEvent
        do {
            event = try EventCodec.decode(recorded)
        } catch {
            throw .unreadableEvent(position: recorded.position, reason: error.description)
        }
        let stream = event.stream.name
        guard stream == recorded.stream else {
            throw .unreadableEvent(
                position: recorded.position,
                reason: "a \(recorded.type) of '\(stream)' is recorded on the stream '\(recorded.stream)'")
        }
        return ProjectedEvent(
            position: recorded.position, recordedAt: Timestamp(millisecondsSinceEpoch: recorded.recordedAt),
            event: event)
    }

    /// The row changes of `events`, in order (an event that changes no row gives none). Each
    /// payload is read through the fast path (`PayloadProjection`, which trusts the log's own
    /// payloads); anything it does not read goes through `decode` and `change(for:)`, which
    /// give the same change, or throw `unreadableEvent` saying what is wrong.
    public static func changes(_ events: ArraySlice<RecordedEvent>) throws(ReadModelStoreError) -> [ReadModelChange] {
        var changes: [ReadModelChange] = []
        changes.reserveCapacity(events.count)
        for recorded in events where isProjected(recorded.stream) {
            switch PayloadProjection.change(recorded) {
            case .change(let change):
                if let change { changes.append(change) }
            case .unsupported:
                if let decoded = try decode(recorded), let change = change(for: decoded) { changes.append(change) }
            }
        }
        return changes
    }

    /// The row change of one event given as the bytes it arrived in, as `changes` gives it
    /// for the event decoded: the payload is read straight from `data`, and only an event the
    /// fast path does not read is decoded whole (`decoded`, nil when its envelope's strings
    /// are not readable) and takes the slow path, with its errors. Nil when it changes no row.
    public static func change(
        position: Int64, recordedAt: Int64, stream: UnsafeBufferPointer<UInt8>, type: UnsafeBufferPointer<UInt8>,
        data: UnsafeBufferPointer<UInt8>, decoded: () -> RecordedEvent?
    ) throws(ReadModelStoreError) -> ReadModelChange? {
        if let projected = isProjected(stream) {
            guard projected else { return nil }
            let outcome = PayloadProjection.change(
                PayloadProjection.EventBytes(
                    position: position, recordedAt: recordedAt, stream: stream, type: type, data: data))
            if case .change(let change) = outcome { return change }
        }
        guard let recorded = decoded() else {
            throw .unreadableEvent(position: position, reason: "its envelope's strings are not readable")
        }
        guard isProjected(recorded.stream), let event = try decode(recorded) else { return nil }
        return change(for: event)
    }

    /// Whether events of `stream` have read models (`projectedCategories` holds its category),
    /// told from the name's first bytes for the usual `category-id` names.
    static func isProjected(_ stream: String) -> Bool {
        var stream = stream
        if let projected = stream.withUTF8({ isProjected($0) }) { return projected }
        return projectedCategories.contains(RecordedEvent.category(ofStream: stream))
    }

    /// `isProjected` told from a stream name's bytes as written; nil when its first bytes
    /// are not one of the usual prefixes (the caller then decodes the name).
    static func isProjected(_ stream: UnsafeBufferPointer<UInt8>) -> Bool? {
        for (prefix, projected) in streamPrefixes where prefix.withUTF8Buffer({ stream.starts(with: $0) }) {
            return projected
        }
        return nil
    }

    private static let streamPrefixes: [(prefix: StaticString, projected: Bool)] = [
        ("user-", true), ("post-", true), ("product-", true), ("order-", true), ("email-", false),
    ]

    /// Writes changes in order.
    public static func apply(_ changes: [ReadModelChange], to writer: inout some ReadModelWriter)
        throws(ReadModelStoreError)
    {
        for change in changes { try writer.write(change) }
    }

    /// Applies decoded events in order.
    public static func apply(_ events: [ProjectedEvent], to writer: inout some ReadModelWriter)
        throws(ReadModelStoreError)
    {
        for event in events {
            if let change = change(for: event) { try writer.write(change) }
        }
    }

    /// Checks, decodes and applies a batch: what `ReadModelStore.apply` does inside its
    /// transaction. Nothing is written when it throws while checking or decoding.
    public static func project(
        _ events: some EventBatch, through: Int64, checkpoint: Int64, into writer: inout some ReadModelWriter
    ) throws(ReadModelStoreError) {
        try check(events, through: through, checkpoint: checkpoint)
        try apply(try events.readModelChanges(0..<events.count), to: &writer)
    }

    /// The one row write `event` makes; nil when it changes no read model.
    public static func change(for projected: ProjectedEvent) -> ReadModelChange? {
        let at = projected.recordedAt
        let position = projected.position
        switch projected.event {
        case .user(.registered(let e)):
            let user = UserView(
                userId: e.userId, name: e.name.value, email: e.email.value, gender: e.gender, birthday: e.birthday,
                subscription: e.subscription, registeredAt: at, updatedAt: at)
            return .insertUser(user, position: position)
        case .user(.profileUpdated(let e)):
            return .updateUser(
                e.userId,
                UserChanges(
                    name: e.name?.value, email: e.email?.value, gender: e.gender, birthday: e.birthday, updatedAt: at))
        case .user(.subscriptionChanged(let e)):
            return .updateUser(e.userId, UserChanges(subscription: e.to, updatedAt: at))
        case .user(.deleted(let e)):
            return .removeUser(e.userId)
        case .user(.forgotten(let e)):
            return .removeUser(e.userId)
        case .user(.erased):
            return nil
        case .emailClaim:
            return nil
        case .post(.created(let e)):
            let post = PostView(
                postId: e.postId, authorId: e.authorId, title: e.title.value, content: e.content.value,
                createdAt: at, updatedAt: at)
            return .insertPost(post, position: position)
        case .post(.edited(let e)):
            return .updatePost(e.postId, PostChanges(title: e.title?.value, content: e.content?.value, updatedAt: at))
        case .post(.deleted(let e)):
            return .removePost(e.postId)
        case .product(.added(let e)):
            let product = ProductView(
                productId: e.productId, name: e.name.value, price: e.price, category: e.category,
                stock: e.stock.value, updatedAt: at)
            return .insertProduct(product, position: position)
        case .product(.updated(let e)):
            return .updateProduct(
                e.productId, ProductChanges(name: e.name?.value, price: e.price, category: e.category, updatedAt: at))
        case .product(.restocked(let e)):
            return .updateProduct(e.productId, ProductChanges(stock: e.stock.value, updatedAt: at))
        case .product(.purchased(let e)):
            return .updateProduct(e.productId, ProductChanges(stock: e.stock.value, updatedAt: at))
        case .product(.removed(let e)):
            return .removeProduct(e.productId)
        case .order(.placed(let e)):
            let order = OrderView(
                orderId: e.orderId, userId: e.userId, productId: e.productId, quantity: e.quantity.value,
                unitPrice: e.unitPrice, totalPrice: e.totalPrice, status: e.status, placedAt: at)
            return .insertOrder(order, position: position)
        }
    }
}
