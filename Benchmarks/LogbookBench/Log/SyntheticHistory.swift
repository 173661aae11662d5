import LogbookApplication
import LogbookDomain

/// A reproducible, valid history of the shop for the replay and memory figures: users who
/// register (with their email claim), add products, write posts and buy (each purchase
/// with its order), and then mostly change things (restocks, price changes, post edits,
/// subscription changes, renames), so that `events` events fall on exactly `streams`
/// streams. Every event is a domain event written by the domain's own codec, in the order
/// and with the figures (stock, prices, totals) the deciders would produce, so the log
/// passes `LogAudit` and the projector takes it.
struct SyntheticHistory {
    struct Plan: Sendable, Equatable {
        var users: Int
        var products: Int
        var posts: Int
        var orders: Int
        var updates: Int

        /// Splits a target of `events` events on `streams` streams: a fifth of the streams
        /// are users (each with its email claim stream), a tenth products, a fifth posts,
        /// the rest orders; updates fill up the events.
        init(events: Int, streams: Int) throws(BenchError) {
            users = max(1, streams / 5)
            products = max(1, streams / 10)
            posts = max(1, streams / 5)
            orders = max(0, streams - 2 * users - products - posts)
            updates = events - (2 * users + products + posts + 2 * orders)
            guard updates >= 0 else {
                throw BenchError("\(events) events cannot make \(streams) streams: each stream needs 1.3 events")
            }
        }

        var events: Int { 2 * users + products + posts + 2 * orders + updates }
        var streams: Int { 2 * users + products + posts + orders }
    }

    private enum Action: CaseIterable {
        case register, addProduct, createPost, purchase, update
    }

    private var remaining: [Action: Int]
    private var random: SplitMix64
    private var commands = 0
    private var clock: Int64
    // What exists so far, enough to decide valid next events.
    private var subscriptions: [Subscription] = []
    private var stocks: [Int] = []
    private var prices: [Money] = []
    private var postCount = 0
    private var orderCount = 0

    init(_ plan: Plan, seed: UInt64, startingAt clock: Int64) {
        remaining = [
            .register: plan.users, .addProduct: plan.products, .createPost: plan.posts, .purchase: plan.orders,
            .update: plan.updates,
        ]
        random = SplitMix64(seed: seed)
        self.clock = clock
    }

    /// The next command's append request, or nil when the history is complete.
    mutating func next() throws(BenchError) -> AppendRequest? {
        guard let action = chooseAction() else { return nil }
        remaining[action, default: 0] -= 1
        commands += 1
        clock += 1
        let commandId = "gen-\(commands)"
        let events: [DomainEvent]
        do {
            events = try makeEvents(action)
        } catch {
            throw BenchError("the log generator made an invalid value: \(error)")
        }
        return AppendRequest(
            metadata: EventMetadata(commandId: commandId, correlationId: commandId, causationId: commandId),
            events: events.map { event in
                NewEvent(
                    eventId: newEventId(), stream: event.stream.name, type: event.typeName,
                    data: EventCodec.encodedText(event), recordedAt: clock)
            },
            expectations: [:])
    }

    /// Picks what happens next in proportion to what is left, except that a purchase needs
    /// a user and a product and an update needs something to change.
    private mutating func chooseAction() -> Action? {
        var candidates = Action.allCases.filter { (remaining[$0] ?? 0) > 0 }
        if subscriptions.isEmpty || stocks.isEmpty {
            candidates.removeAll { $0 == .purchase || $0 == .update || $0 == .createPost }
            if subscriptions.isEmpty && candidates.contains(.register) { return .register }
            if stocks.isEmpty && candidates.contains(.addProduct) { return .addProduct }
        }
        let total = candidates.reduce(0) { $0 + (remaining[$1] ?? 0) }
        guard total > 0 else { return nil }
        var pick = Int.random(in: 0..<total, using: &random)
        for action in candidates {
            pick -= remaining[action] ?? 0
            if pick < 0 { return action }
        }
        return candidates.last
    }

    /// The claim stream of generated user `number`: the history is written straight into a
    /// log, without a worker's vault, so its addresses are spread by number.
    private static func bucket(_ number: Int) throws(DomainError) -> EmailBucket {
        let hex = String(number & 0xFFFF, radix: 16)
        return try EmailBucket(String(repeating: "0", count: EmailBucket.digits - hex.count) + hex)
    }

    private mutating func makeEvents(_ action: Action) throws(DomainError) -> [DomainEvent] {
        switch action {
        case .register:
            let number = subscriptions.count
            let userId = try UserId("gu\(number)")
            let email = try EmailAddress("gu\(number)@generated.example")
            let birthday =
                number % 3 == 0
                ? nil : try Birthday(recorded: "19\(50 + number % 50)-0\(1 + number % 9)-1\(number % 10)")
            subscriptions.append(.free)
            return [
                .user(
                    .registered(
                        UserRegistered(
                            userId: userId, name: try PersonName("Generated User \(number)"), email: email,
                            gender: Gender.allCases[number % Gender.allCases.count], birthday: birthday,
                            subscription: .free))),
                .emailClaim(
                    .claimed(EmailClaimed(bucket: try Self.bucket(number), email: email.normalized, userId: userId))),
            ]
        case .addProduct:
            let number = stocks.count
            let price = try Money("\(1 + number % 97).\(10 + number % 90)")
            stocks.append(1_000_000)
            prices.append(price)
            return [
                .product(
                    .added(
                        ProductAdded(
                            productId: try ProductId("gp\(number)"),
                            name: try ProductName("Generated product \(number)"),
                            price: price, category: ProductCategory.allCases[number % ProductCategory.allCases.count],
                            stock: try Stock(1_000_000))))
            ]
        case .createPost:
            postCount += 1
            return [
                .post(
                    .created(
                        PostCreated(
                            postId: try PostId("gpost\(postCount - 1)"), authorId: try randomUser(),
                            title: try PostTitle("Generated post \(postCount - 1)"),
                            content: try PostContent(Self.content(postCount - 1)))))
            ]
        case .purchase:
            let product = Int.random(in: 0..<stocks.count, using: &random)
            let quantity = Int.random(in: 1...3, using: &random)
            stocks[product] -= quantity
            let orderId = try OrderId("go\(orderCount)")
            orderCount += 1
            let userId = try randomUser()
            let productId = try ProductId("gp\(product)")
            let amount = try Quantity(quantity)
            return [
                .product(
                    .purchased(
                        ProductPurchased(
                            productId: productId, orderId: orderId, userId: userId, quantity: amount,
                            stock: try Stock(stocks[product])))),
                .order(
                    .placed(
                        OrderPlaced(
                            orderId: orderId, userId: userId, productId: productId, quantity: amount,
                            unitPrice: prices[product], totalPrice: try prices[product].multiplied(by: amount),
                            status: .pending))),
            ]
        case .update:
            return [try makeUpdate()]
        }
    }

    /// One change to something that exists: a restock, a price change, a post edit, a
    /// subscription change or a rename, in turn by chance.
    private mutating func makeUpdate() throws(DomainError) -> DomainEvent {
        let kind = postCount == 0 ? Int.random(in: 0..<4, using: &random) : Int.random(in: 0..<5, using: &random)
        switch kind {
        case 0:
            let product = Int.random(in: 0..<stocks.count, using: &random)
            let quantity = Int.random(in: 1...1_000, using: &random)
            stocks[product] += quantity
            return .product(
                .restocked(
                    ProductRestocked(
                        productId: try ProductId("gp\(product)"), quantity: try Quantity(quantity),
                        stock: try Stock(stocks[product]))))
        case 1:
            let product = Int.random(in: 0..<stocks.count, using: &random)
            let price = try Money(
                "\(Int.random(in: 1...500, using: &random)).\(Int.random(in: 10...99, using: &random))")
            prices[product] = price
            return .product(.updated(ProductUpdated(productId: try ProductId("gp\(product)"), price: price)))
        case 2:
            let user = Int.random(in: 0..<subscriptions.count, using: &random)
            let from = subscriptions[user]
            let to = Subscription.allCases.filter { $0 != from }[Int.random(in: 0..<2, using: &random)]
            subscriptions[user] = to
            return .user(.subscriptionChanged(SubscriptionChanged(userId: try UserId("gu\(user)"), from: from, to: to)))
        case 3:
            let user = Int.random(in: 0..<subscriptions.count, using: &random)
            return .user(
                .profileUpdated(
                    UserProfileUpdated(
                        userId: try UserId("gu\(user)"), name: try PersonName("Renamed User \(commands)"))))
        default:
            let post = Int.random(in: 0..<postCount, using: &random)
            return .post(
                .edited(
                    PostEdited(postId: try PostId("gpost\(post)"), content: try PostContent(Self.content(commands)))))
        }
    }

    private mutating func randomUser() throws(DomainError) -> UserId {
        try UserId("gu\(Int.random(in: 0..<subscriptions.count, using: &random))")
    }

    /// A post body of a realistic length (about 200 bytes).
    private static func content(_ number: Int) -> String {
        "Post body \(number): an event-sourced shop keeps every change as an event, and the read models "
            + "follow the log. This text stands for what people write, about two hundred bytes long."
    }

    /// A random (version 4 shaped) UUID from the seeded generator.
    private mutating func newEventId() -> String {
        let high = random.next()
        let low = random.next()
        func hex(_ value: UInt64, _ digits: Int) -> String {
            let text = String(value, radix: 16)
            return String(repeating: "0", count: max(0, digits - text.count)) + text
        }
        return "\(hex(high >> 32, 8))-\(hex((high >> 16) & 0xffff, 4))-4\(hex(high & 0xfff, 3))-"
            + "\(hex(0x8000 | (low >> 48) & 0x3fff, 4))-\(hex(low & 0xffff_ffff_ffff, 12))"
    }
}
