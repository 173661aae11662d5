import LogbookApplication
public import LogbookDomain

/// Domain events built from plain values, so tests say only what matters.
public enum Events {
    public static func registered(
        _ id: String, name: String = "Ann", email: String? = nil, gender: Gender = .unknown, birthday: String? = nil,
        subscription: Subscription = .free
    ) throws -> DomainEvent {
        .user(
            .registered(
                UserRegistered(
                    userId: try UserId(id), name: try PersonName(name),
                    email: try EmailAddress(email ?? "\(id)@example.com"),
                    gender: gender, birthday: try birthday.map { raw throws in try Birthday(recorded: raw) },
                    subscription: subscription)))
    }

    public static func profileUpdated(
        _ id: String, name: String? = nil, email: String? = nil, gender: Gender? = nil, birthday: String? = nil
    ) throws -> DomainEvent {
        .user(
            .profileUpdated(
                UserProfileUpdated(
                    userId: try UserId(id), name: try name.map { raw throws in try PersonName(raw) },
                    email: try email.map { raw throws in try EmailAddress(raw) }, gender: gender,
                    birthday: try birthday.map { raw throws in try Birthday(recorded: raw) })))
    }

    public static func subscriptionChanged(_ id: String, from: Subscription, to: Subscription) throws -> DomainEvent {
        .user(.subscriptionChanged(SubscriptionChanged(userId: try UserId(id), from: from, to: to)))
    }

    public static func userDeleted(_ id: String) throws -> DomainEvent {
        .user(.deleted(UserDeleted(userId: try UserId(id))))
    }

    public static func emailClaimed(_ email: String, by id: String) throws -> DomainEvent {
        let address = try NormalizedEmail(normalized: email)
        return .emailClaim(
            .claimed(
                EmailClaimed(
                    bucket: EmailBucketing.forTests.bucket(of: address), email: address, userId: try UserId(id))))
    }

    public static func userForgotten(_ id: String) throws -> DomainEvent {
        .user(.forgotten(UserForgotten(userId: try UserId(id))))
    }

    public static func postCreated(_ id: String, author: String, title: String = "Hello", content: String = "Body")
        throws -> DomainEvent
    {
        .post(
            .created(
                PostCreated(
                    postId: try PostId(id), authorId: try UserId(author, field: "authorId"),
                    title: try PostTitle(title), content: try PostContent(content))))
    }

    public static func postEdited(_ id: String, title: String? = nil, content: String? = nil) throws -> DomainEvent {
        .post(
            .edited(
                PostEdited(
                    postId: try PostId(id), title: try title.map { raw throws in try PostTitle(raw) },
                    content: try content.map { raw throws in try PostContent(raw) })))
    }

    public static func postDeleted(_ id: String) throws -> DomainEvent {
        .post(.deleted(PostDeleted(postId: try PostId(id))))
    }

    public static func productAdded(
        _ id: String, name: String = "Tea", price: String = "2.50", category: ProductCategory = .food, stock: Int = 10
    ) throws -> DomainEvent {
        .product(
            .added(
                ProductAdded(
                    productId: try ProductId(id), name: try ProductName(name), price: try Money(price),
                    category: category, stock: try Stock(stock))))
    }

    public static func productUpdated(
        _ id: String, name: String? = nil, price: String? = nil, category: ProductCategory? = nil
    ) throws -> DomainEvent {
        .product(
            .updated(
                ProductUpdated(
                    productId: try ProductId(id), name: try name.map { raw throws in try ProductName(raw) },
                    price: try price.map { raw throws in try Money(raw) }, category: category)))
    }

    public static func productRestocked(_ id: String, quantity: Int, stock: Int) throws -> DomainEvent {
        .product(
            .restocked(
                ProductRestocked(
                    productId: try ProductId(id), quantity: try Quantity(quantity), stock: try Stock(stock))
            ))
    }

    public static func productRemoved(_ id: String) throws -> DomainEvent {
        .product(.removed(ProductRemoved(productId: try ProductId(id))))
    }

    public static func productPurchased(_ id: String, order: String, user: String, quantity: Int, stock: Int) throws
        -> DomainEvent
    {
        .product(
            .purchased(
                ProductPurchased(
                    productId: try ProductId(id), orderId: try OrderId(order), userId: try UserId(user),
                    quantity: try Quantity(quantity), stock: try Stock(stock))))
    }

    public static func orderPlaced(_ id: String, user: String, product: String, quantity: Int, unitPrice: String)
        throws -> DomainEvent
    {
        let price = try Money(unitPrice)
        let quantity = try Quantity(quantity)
        return .order(
            .placed(
                OrderPlaced(
                    orderId: try OrderId(id), userId: try UserId(user), productId: try ProductId(product),
                    quantity: quantity, unitPrice: price, totalPrice: try price.multiplied(by: quantity),
                    status: .pending)))
    }

    /// A purchase as the log holds it: `ProductPurchased` then `OrderPlaced`.
    public static func purchase(
        order: String, user: String, product: String, quantity: Int, stockAfter: Int, unitPrice: String = "2.50"
    ) throws -> [DomainEvent] {
        [
            try productPurchased(product, order: order, user: user, quantity: quantity, stock: stockAfter),
            try orderPlaced(order, user: user, product: product, quantity: quantity, unitPrice: unitPrice),
        ]
    }
}

extension Log {
    public mutating func record(_ events: [DomainEvent]) {
        for event in events { record(event) }
    }

    /// A short log with an event of every type the codec writes, each changing a row but the
    /// email claim.
    public static func everyEventType() throws -> Log {
        var log = Log()
        log.record([
            try Events.registered("u1"), try Events.registered("u2", birthday: "1990-02-03"),
            try Events.profileUpdated("u1", name: "New Name", gender: .female),
            try Events.profileUpdated("u2", email: "x@y.example", birthday: "2000-01-01"),
            try Events.subscriptionChanged("u1", from: .free, to: .premium),
            try Events.emailClaimed("a@b.example", by: "u1"),
            try Events.postCreated("p1", author: "u1", title: "T \"quoted\" é", content: "line\u{0}\ttab é 🙂"),
            try Events.postEdited("p1", title: "T2"), try Events.postEdited("p1", content: ""),
            try Events.postDeleted("p1"),
            try Events.productAdded("x1", name: "Lamp", price: "19.9", category: .electronics, stock: 3),
            try Events.productUpdated("x1", name: "Lamp 2", price: "0.05", category: .food),
            try Events.productUpdated("x1", price: "7"), try Events.productRestocked("x1", quantity: 2, stock: 5),
            try Events.productPurchased("x1", order: "o1", user: "u1", quantity: 1, stock: 4),
            try Events.orderPlaced("o1", user: "u1", product: "x1", quantity: 1, unitPrice: "3.10"),
            try Events.productRemoved("x1"), try Events.userDeleted("u2"),
        ])
        return log
    }
}
