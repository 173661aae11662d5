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

/// Folds events of the log into the read models' rows. Pure: it reads rows through a
/// `ReadModelLookup` and says what to write as `ReadModelChange`s; the stores only carry
/// them out, inside one transaction per batch together with the checkpoint.
///
/// - `UserRegistered`, `PostCreated`, `ProductAdded`, `OrderPlaced` insert a row (unless
///   one with that id exists: a valid log never reuses an id, and the first one wins).
/// - `UserProfileUpdated` (the changed fields), `SubscriptionChanged`, `PostEdited`,
///   `ProductUpdated`, `ProductRestocked` and `ProductPurchased` (the stock the event
///   records) update the row and its `updatedAt`; an update of a row that does not exist
///   is skipped.
/// - `UserDeleted`, `PostDeleted`, `ProductRemoved` remove the row: it answers `not_found`
///   and leaves every list.
/// - Events of categories without a read model (`email`, the internal claim streams, and
///   any other) are skipped without being decoded; they still advance the checkpoint.
public enum Projector {
    /// The stream categories that have read models.
    public static let projectedCategories: Set<String> = ["user", "post", "product", "order"]

    /// Checks a batch against the checkpoint and decodes the events that have read models.
    /// Throws, before anything is written, for an event at or below the checkpoint,
    /// positions that do not strictly increase, an event beyond `through`, `through`
    /// below the checkpoint, or an event that cannot be decoded (or whose payload names
    /// another stream than the one it was recorded on).
    public static func prepare(_ events: [RecordedEvent], through: Int64, checkpoint: Int64)
        throws(ReadModelStoreError) -> [ProjectedEvent]
    {
        guard through >= checkpoint else { throw .checkpointWouldMoveBack(through: through, checkpoint: checkpoint) }
        var previous: Int64?
        var prepared: [ProjectedEvent] = []
        prepared.reserveCapacity(events.count)
        for recorded in events {
            if recorded.position <= checkpoint {
                throw .alreadyApplied(position: recorded.position, checkpoint: checkpoint)
            }
            if let previous, recorded.position <= previous {
                throw .outOfOrder(position: recorded.position, previous: previous)
            }
            if recorded.position > through { throw .beyondTarget(position: recorded.position, through: through) }
            previous = recorded.position
            if let decoded = try decode(recorded) { prepared.append(decoded) }
        }
        return prepared
    }

    /// The decoded event, or nil for a category without a read model.
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

    /// Applies prepared events in order, each seeing the rows the earlier ones wrote.
    public static func apply(_ events: [ProjectedEvent], to writer: inout some ReadModelWriter)
        throws(ReadModelStoreError)
    {
        for event in events {
            if let change = try change(for: event, current: writer) { try writer.write(change) }
        }
    }

    /// Checks, decodes and applies a batch: what `ReadModelStore.apply` does inside its
    /// transaction. Nothing is written when it throws while checking or decoding.
    public static func project(
        _ events: [RecordedEvent], through: Int64, checkpoint: Int64, into writer: inout some ReadModelWriter
    ) throws(ReadModelStoreError) {
        try apply(try prepare(events, through: through, checkpoint: checkpoint), to: &writer)
    }

    /// The one row write `event` makes, given the current rows; nil when it changes nothing.
    public static func change(for projected: ProjectedEvent, current rows: some ReadModelLookup)
        throws(ReadModelStoreError) -> ReadModelChange?
    {
        let at = projected.recordedAt
        switch projected.event {
        case .user(let event): return try change(for: event, at: at, position: projected.position, rows)
        case .post(let event): return try change(for: event, at: at, position: projected.position, rows)
        case .product(let event): return try change(for: event, at: at, position: projected.position, rows)
        case .order(.placed(let e)):
            guard try !rows.containsOrder(e.orderId) else { return nil }
            let order = OrderView(
                orderId: e.orderId, userId: e.userId, productId: e.productId, quantity: e.quantity.value,
                unitPrice: e.unitPrice, totalPrice: e.totalPrice, status: e.status, placedAt: at)
            return .insertOrder(order, position: projected.position)
        case .emailClaim:
            return nil
        }
    }

    private static func change(for event: UserEvent, at: Timestamp, position: Int64, _ rows: some ReadModelLookup)
        throws(ReadModelStoreError) -> ReadModelChange?
    {
        switch event {
        case .registered(let e):
            guard try rows.user(e.userId) == nil else { return nil }
            let user = UserView(
                userId: e.userId, name: e.name.value, email: e.email.value, gender: e.gender, birthday: e.birthday,
                subscription: e.subscription, registeredAt: at, updatedAt: at)
            return .insertUser(user, position: position)
        case .profileUpdated(let e):
            guard var user = try rows.user(e.userId) else { return nil }
            if let name = e.name { user.name = name.value }
            if let email = e.email { user.email = email.value }
            if let gender = e.gender { user.gender = gender }
            if let birthday = e.birthday { user.birthday = birthday }
            user.updatedAt = at
            return .updateUser(user)
        case .subscriptionChanged(let e):
            guard var user = try rows.user(e.userId) else { return nil }
            user.subscription = e.to
            user.updatedAt = at
            return .updateUser(user)
        case .deleted(let e):
            return .removeUser(e.userId)
        }
    }

    private static func change(for event: PostEvent, at: Timestamp, position: Int64, _ rows: some ReadModelLookup)
        throws(ReadModelStoreError) -> ReadModelChange?
    {
        switch event {
        case .created(let e):
            guard try rows.post(e.postId) == nil else { return nil }
            let post = PostView(
                postId: e.postId, authorId: e.authorId, title: e.title.value, content: e.content.value,
                createdAt: at, updatedAt: at)
            return .insertPost(post, position: position)
        case .edited(let e):
            guard var post = try rows.post(e.postId) else { return nil }
            if let title = e.title { post.title = title.value }
            if let content = e.content { post.content = content.value }
            post.updatedAt = at
            return .updatePost(post)
        case .deleted(let e):
            return .removePost(e.postId)
        }
    }

    private static func change(
        for event: ProductEvent, at: Timestamp, position: Int64, _ rows: some ReadModelLookup
    ) throws(ReadModelStoreError) -> ReadModelChange? {
        switch event {
        case .added(let e):
            guard try rows.product(e.productId) == nil else { return nil }
            let product = ProductView(
                productId: e.productId, name: e.name.value, price: e.price, category: e.category,
                stock: e.stock.value, updatedAt: at)
            return .insertProduct(product, position: position)
        case .updated(let e):
            guard var product = try rows.product(e.productId) else { return nil }
            if let name = e.name { product.name = name.value }
            if let price = e.price { product.price = price }
            if let category = e.category { product.category = category }
            product.updatedAt = at
            return .updateProduct(product)
        case .restocked(let e):
            guard var product = try rows.product(e.productId) else { return nil }
            product.stock = e.stock.value
            product.updatedAt = at
            return .updateProduct(product)
        case .purchased(let e):
            guard var product = try rows.product(e.productId) else { return nil }
            product.stock = e.stock.value
            product.updatedAt = at
            return .updateProduct(product)
        case .removed(let e):
            return .removeProduct(e.productId)
        }
    }
}
