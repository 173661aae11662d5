import LogbookDomain

/// What `LogAudit` remembers of each entity to judge the next event: who exists and is
/// live, products' prices and stock, and who holds which email address. Each `apply`
/// returns the promises the event breaks, as sentences, which name ids but never an
/// address (they are printed).
struct Ledger {
    private enum Life { case live, gone }

    private var users: [UserId: Life] = [:]
    private var posts: [PostId: Life] = [:]
    private var products: [ProductId: (price: Money, stock: Int)?] = [:]  // nil once removed
    private var orders = Set<OrderId>()
    private var claims: [NormalizedEmail: UserId] = [:]
    private var claimsOfUser: [UserId: Set<NormalizedEmail>] = [:]
    private var emailOfLiveUser: [UserId: NormalizedEmail] = [:]
    private var liveUserWithEmail: [NormalizedEmail: UserId] = [:]

    func price(of product: ProductId) -> Money? { products[product]??.price }

    mutating func apply(_ event: DomainEvent) -> [String] {
        switch event {
        case .user(let e): applyUser(e)
        case .post(let e): applyPost(e)
        case .product(let e): applyProduct(e)
        case .order(.placed(let e)): orders.insert(e.orderId).inserted ? [] : ["order \(e.orderId) is placed twice"]
        case .emailClaim(let e): applyClaim(e)
        }
    }

    private func isLive(_ user: UserId) -> Bool { users[user] == .live }

    private mutating func applyUser(_ event: UserEvent) -> [String] {
        switch event {
        case .registered(let e):
            guard users[e.userId] == nil else { return ["user \(e.userId) is registered twice"] }
            users[e.userId] = .live
            return takeEmail(e.email.normalized, for: e.userId)
        case .profileUpdated(let e):
            guard isLive(e.userId) else { return ["user \(e.userId) is updated while not live"] }
            return e.email.map { takeEmail($0.normalized, for: e.userId) } ?? []
        case .subscriptionChanged(let e):
            return isLive(e.userId) ? [] : ["user \(e.userId) changes subscription while not live"]
        case .deleted(let e):
            guard isLive(e.userId) else { return ["user \(e.userId) is deleted while not live"] }
            users[e.userId] = .gone
            if let email = emailOfLiveUser.removeValue(forKey: e.userId) { liveUserWithEmail[email] = nil }
            return []
        case .forgotten(let e):
            guard users[e.userId] != nil else { return ["user \(e.userId) is forgotten without being registered"] }
            users[e.userId] = .gone
            if let email = emailOfLiveUser.removeValue(forKey: e.userId) { liveUserWithEmail[email] = nil }
            return []
        case .erased(let e):
            // Its values are gone; what is left to check is that the user's life makes sense.
            if e.typeName == "UserRegistered" {
                guard users[e.userId] == nil else { return ["user \(e.userId) is registered twice"] }
                users[e.userId] = .live
                return []
            }
            return isLive(e.userId) ? [] : ["user \(e.userId) is updated while not live"]
        }
    }

    private mutating func takeEmail(_ email: NormalizedEmail, for userId: UserId) -> [String] {
        var problems: [String] = []
        if let other = liveUserWithEmail[email], other != userId {
            problems.append("\(userId) and \(other) are both live with one email address")
        }
        if let old = emailOfLiveUser[userId], liveUserWithEmail[old] == userId { liveUserWithEmail[old] = nil }
        emailOfLiveUser[userId] = email
        liveUserWithEmail[email] = userId
        return problems
    }

    private mutating func applyPost(_ event: PostEvent) -> [String] {
        switch event {
        case .created(let e):
            guard posts[e.postId] == nil else { return ["post \(e.postId) is created twice"] }
            posts[e.postId] = .live
            return isLive(e.authorId) ? [] : ["post \(e.postId) is written by \(e.authorId), who is not live"]
        case .edited(let e):
            return posts[e.postId] == .live ? [] : ["post \(e.postId) is edited while not live"]
        case .deleted(let e):
            guard posts[e.postId] == .live else { return ["post \(e.postId) is deleted while not live"] }
            posts[e.postId] = .gone
            return []
        }
    }

    private mutating func applyProduct(_ event: ProductEvent) -> [String] {
        switch event {
        case .added(let e):
            guard products[e.productId] == nil else { return ["product \(e.productId) is added twice"] }
            products[e.productId] = (e.price, e.stock.value)
            return []
        case .updated(let e):
            guard var row = products[e.productId] ?? nil else { return ["product \(e.productId) is updated off sale"] }
            row.price = e.price ?? row.price
            products[e.productId] = row
            return []
        case .restocked(let e):
            guard var row = products[e.productId] ?? nil else { return ["restock of \(e.productId), not on sale"] }
            defer { products[e.productId] = (row.price, e.stock.value) }
            row.stock += e.quantity.value
            return row.stock == e.stock.value
                ? [] : ["\(e.productId) restocked \(e.quantity) from \(row.stock - e.quantity.value) to \(e.stock)"]
        case .purchased(let e):
            guard let row = products[e.productId] ?? nil else { return ["purchase of \(e.productId), not on sale"] }
            products[e.productId] = (row.price, e.stock.value)
            var problems: [String] = []
            if row.stock < e.quantity.value || e.stock.value != row.stock - e.quantity.value {
                problems.append("\(e.productId) sold \(e.quantity) from \(row.stock), leaving \(e.stock)")
            }
            if !isLive(e.userId) { problems.append("\(e.productId) sold to \(e.userId), who is not live") }
            if orders.contains(e.orderId) { problems.append("order \(e.orderId) is used again") }
            return problems
        case .removed(let e):
            guard products[e.productId] ?? nil != nil else { return ["product \(e.productId) is removed off sale"] }
            products[e.productId] = .some(nil)
            return []
        }
    }

    private mutating func applyClaim(_ event: EmailClaimEvent) -> [String] {
        switch event {
        case .claimed(let e):
            defer {
                claims[e.email] = e.userId
                claimsOfUser[e.userId, default: []].insert(e.email)
            }
            if let holder = claims[e.email] {
                return ["an address of bucket \(e.bucket) is claimed by \(e.userId) while \(holder) holds it"]
            }
            return []
        case .released(let e):
            defer {
                if let holder = claims.removeValue(forKey: e.email) { claimsOfUser[holder]?.remove(e.email) }
            }
            return claims[e.email] == e.userId
                ? [] : ["an address of bucket \(e.bucket) is released by \(e.userId), who does not hold it"]
        case .forgotten(let e):
            // The address is gone with its user: drop whatever claim that user held.
            for email in claimsOfUser.removeValue(forKey: e.userId) ?? [] where claims[email] == e.userId {
                claims[email] = nil
            }
            return []
        }
    }
}
