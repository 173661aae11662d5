import LogbookDomain

/// A plain model of the rules in ARCHITECTURE.md §4, written independently of the deciders:
/// it predicts, for a valid command, the error code or the event types the domain must answer.
struct ReferenceModel {
    struct UserRow {
        var live: Bool
        var forgotten = false
        var name: PersonName
        var email: EmailAddress
        var gender: Gender
        var birthday: Birthday?
        var subscription: Subscription
    }

    struct PostRow {
        var live: Bool
        var title: PostTitle
        var content: PostContent
    }

    struct ProductRow {
        var live: Bool
        var name: ProductName
        var priceCents: Int64
        var category: ProductCategory
        var stock: Int
    }

    struct OrderRow {
        var userId: String
        var productId: String
        var quantity: Int
        var unitPriceCents: Int64
    }

    /// Every id ever used stays here, live or not: ids are never reused.
    var users: [String: UserRow] = [:]
    var posts: [String: PostRow] = [:]
    var products: [String: ProductRow] = [:]
    var orders: [String: OrderRow] = [:]

    enum Prediction: Equatable, CustomStringConvertible {
        case refused(code: String)
        case accepted(eventTypes: [String])

        var description: String {
            switch self {
            case .refused(let code): "refused with \(code)"
            case .accepted(let types): "accepted with \(types)"
            }
        }
    }

    /// The live user holding the address, compared case-insensitively.
    func holder(of email: EmailAddress) -> String? {
        users.first { $0.value.live && $0.value.email.value.lowercased() == email.value.lowercased() }?.key
    }

    func predict(_ command: Command) -> Prediction {
        switch command {
        case .user(.register(let c)):
            if users[c.userId.rawValue] != nil { return .refused(code: "already_exists") }
            if holder(of: c.email) != nil { return .refused(code: "email_taken") }
            return .accepted(eventTypes: ["UserRegistered", "EmailClaimed"])

        case .user(.updateProfile(let c)):
            guard let row = users[c.userId.rawValue], row.live else { return .refused(code: "not_found") }
            let changed =
                (c.name.map { $0 != row.name } ?? false) || (c.email.map { $0.value != row.email.value } ?? false)
                || (c.gender.map { $0 != row.gender } ?? false) || (c.birthday.map { $0 != row.birthday } ?? false)
            let moves = c.email.map { $0.value.lowercased() != row.email.value.lowercased() } ?? false
            if moves, let email = c.email, holder(of: email) != nil { return .refused(code: "email_taken") }
            return .accepted(
                eventTypes: (changed ? ["UserProfileUpdated"] : []) + (moves ? ["EmailClaimed", "EmailReleased"] : []))

        case .user(.changeSubscription(let c)):
            guard let row = users[c.userId.rawValue], row.live else { return .refused(code: "not_found") }
            return .accepted(eventTypes: row.subscription == c.subscription ? [] : ["SubscriptionChanged"])

        case .user(.delete(let c)):
            guard let row = users[c.userId.rawValue], row.live else { return .refused(code: "not_found") }
            return .accepted(eventTypes: ["UserDeleted", "EmailReleased"])

        case .user(.forget(let c)):
            guard let row = users[c.userId.rawValue], !row.forgotten else { return .refused(code: "not_found") }
            return .accepted(eventTypes: row.live ? ["UserForgotten", "EmailReleased"] : ["UserForgotten"])

        case .post(.create(let c)):
            if posts[c.postId.rawValue] != nil { return .refused(code: "already_exists") }
            guard users[c.authorId.rawValue]?.live == true else { return .refused(code: "not_found") }
            return .accepted(eventTypes: ["PostCreated"])

        case .post(.edit(let c)):
            guard let row = posts[c.postId.rawValue], row.live else { return .refused(code: "not_found") }
            let changed = (c.title.map { $0 != row.title } ?? false) || (c.content.map { $0 != row.content } ?? false)
            return .accepted(eventTypes: changed ? ["PostEdited"] : [])

        case .post(.delete(let c)):
            guard posts[c.postId.rawValue]?.live == true else { return .refused(code: "not_found") }
            return .accepted(eventTypes: ["PostDeleted"])

        case .product(.add(let c)):
            if products[c.productId.rawValue] != nil { return .refused(code: "already_exists") }
            return .accepted(eventTypes: ["ProductAdded"])

        case .product(.update(let c)):
            guard let row = products[c.productId.rawValue], row.live else { return .refused(code: "not_found") }
            let changed =
                (c.name.map { $0 != row.name } ?? false) || (c.price.map { $0.cents != row.priceCents } ?? false)
                || (c.category.map { $0 != row.category } ?? false)
            return .accepted(eventTypes: changed ? ["ProductUpdated"] : [])

        case .product(.restock(let c)):
            guard let row = products[c.productId.rawValue], row.live else { return .refused(code: "not_found") }
            if row.stock + c.quantity.value > 1_000_000_000 { return .refused(code: "invalid_input") }
            return .accepted(eventTypes: ["ProductRestocked"])

        case .product(.remove(let c)):
            guard products[c.productId.rawValue]?.live == true else { return .refused(code: "not_found") }
            return .accepted(eventTypes: ["ProductRemoved"])

        case .product(.purchase(let c)):
            guard let row = products[c.productId.rawValue], row.live else { return .refused(code: "not_found") }
            if orders[c.orderId.rawValue] != nil { return .refused(code: "already_exists") }
            guard users[c.userId.rawValue]?.live == true else { return .refused(code: "not_found") }
            if row.stock == 0 { return .refused(code: "product_not_available") }
            if row.stock < c.quantity.value { return .refused(code: "insufficient_stock") }
            return .accepted(eventTypes: ["ProductPurchased", "OrderPlaced"])
        }
    }

    /// Records an accepted command.
    mutating func accept(_ command: Command) {
        switch command {
        case .user(.register(let c)):
            users[c.userId.rawValue] = UserRow(
                live: true, name: c.name, email: c.email, gender: c.gender, birthday: c.birthday,
                subscription: c.subscription)
        case .user(.updateProfile(let c)):
            users[c.userId.rawValue]!.name = c.name ?? users[c.userId.rawValue]!.name
            users[c.userId.rawValue]!.email = c.email ?? users[c.userId.rawValue]!.email
            users[c.userId.rawValue]!.gender = c.gender ?? users[c.userId.rawValue]!.gender
            users[c.userId.rawValue]!.birthday = c.birthday ?? users[c.userId.rawValue]!.birthday
        case .user(.changeSubscription(let c)):
            users[c.userId.rawValue]!.subscription = c.subscription
        case .user(.delete(let c)):
            users[c.userId.rawValue]!.live = false
        case .user(.forget(let c)):
            users[c.userId.rawValue]!.live = false
            users[c.userId.rawValue]!.forgotten = true
        case .post(.create(let c)):
            posts[c.postId.rawValue] = PostRow(live: true, title: c.title, content: c.content)
        case .post(.edit(let c)):
            posts[c.postId.rawValue]!.title = c.title ?? posts[c.postId.rawValue]!.title
            posts[c.postId.rawValue]!.content = c.content ?? posts[c.postId.rawValue]!.content
        case .post(.delete(let c)):
            posts[c.postId.rawValue]!.live = false
        case .product(.add(let c)):
            products[c.productId.rawValue] = ProductRow(
                live: true, name: c.name, priceCents: c.price.cents, category: c.category, stock: c.stock.value)
        case .product(.update(let c)):
            products[c.productId.rawValue]!.name = c.name ?? products[c.productId.rawValue]!.name
            products[c.productId.rawValue]!.priceCents = c.price?.cents ?? products[c.productId.rawValue]!.priceCents
            products[c.productId.rawValue]!.category = c.category ?? products[c.productId.rawValue]!.category
        case .product(.restock(let c)):
            products[c.productId.rawValue]!.stock += c.quantity.value
        case .product(.remove(let c)):
            products[c.productId.rawValue]!.live = false
        case .product(.purchase(let c)):
            products[c.productId.rawValue]!.stock -= c.quantity.value
            orders[c.orderId.rawValue] = OrderRow(
                userId: c.userId.rawValue, productId: c.productId.rawValue, quantity: c.quantity.value,
                unitPriceCents: products[c.productId.rawValue]!.priceCents)
        }
    }
}
