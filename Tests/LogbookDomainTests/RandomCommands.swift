import LogbookDomain
import LogbookTestSupport

/// A command as a client might send it: raw wire values, some of them invalid, drawn from a
/// small universe so that ids and addresses collide often.
enum RawCommand {
    case registerUser(
        user: String, name: String, email: String, gender: String?, birthday: String?, subscription: String?)
    case updateProfile(user: String, name: String?, email: String?, gender: String?, birthday: String?)
    case changeSubscription(user: String, subscription: String)
    case deleteUser(user: String)
    case forgetUser(user: String)
    case createPost(post: String, author: String, title: String, content: String)
    case editPost(post: String, title: String?, content: String?)
    case deletePost(post: String)
    case addProduct(product: String, name: String, price: String, category: String, stock: Int)
    case updateProduct(product: String, name: String?, price: String?, category: String?)
    case restockProduct(product: String, quantity: Int)
    case removeProduct(product: String)
    case purchaseProduct(order: String, user: String, product: String, quantity: Int)

    /// The command as written, shortened so that a failure message stays readable.
    var summary: String { String(String(describing: self).prefix(300)) }

    /// Reads the raw values the way the wire layer does; the first invalid one is refused.
    func parse(today: CalendarDate) throws(DomainError) -> Command {
        switch self {
        case .registerUser(let user, let name, let email, let gender, let birthday, let subscription):
            return .user(
                .register(
                    RegisterUser(
                        userId: try UserId(user), name: try PersonName(name), email: try EmailAddress(email),
                        gender: try gender.map { raw throws(DomainError) in try Gender.parse(raw, field: "gender") }
                            ?? .unknown,
                        birthday: try birthday.map { raw throws(DomainError) in try Birthday(raw, today: today) },
                        subscription: try subscription.map { raw throws(DomainError) in
                            try Subscription.parse(raw, field: "subscription")
                        } ?? .free)))
        case .updateProfile(let user, let name, let email, let gender, let birthday):
            return .user(
                .updateProfile(
                    try UpdateUserProfile(
                        userId: try UserId(user), name: try name.map { raw throws(DomainError) in try PersonName(raw) },
                        email: try email.map { raw throws(DomainError) in try EmailAddress(raw) },
                        gender: try gender.map { raw throws(DomainError) in try Gender.parse(raw, field: "gender") },
                        birthday: try birthday.map { raw throws(DomainError) in try Birthday(raw, today: today) })))
        case .changeSubscription(let user, let subscription):
            return .user(
                .changeSubscription(
                    ChangeSubscription(
                        userId: try UserId(user),
                        subscription: try Subscription.parse(subscription, field: "subscription"))))
        case .deleteUser(let user):
            return .user(.delete(DeleteUser(userId: try UserId(user))))
        case .forgetUser(let user):
            return .user(.forget(ForgetUser(userId: try UserId(user))))
        case .createPost(let post, let author, let title, let content):
            return .post(
                .create(
                    CreatePost(
                        postId: try PostId(post), authorId: try UserId(author, field: "authorId"),
                        title: try PostTitle(title),
                        content: try PostContent(content))))
        case .editPost(let post, let title, let content):
            return .post(
                .edit(
                    try EditPost(
                        postId: try PostId(post),
                        title: try title.map { raw throws(DomainError) in try PostTitle(raw) },
                        content: try content.map { raw throws(DomainError) in try PostContent(raw) })))
        case .deletePost(let post):
            return .post(.delete(DeletePost(postId: try PostId(post))))
        case .addProduct(let product, let name, let price, let category, let stock):
            return .product(
                .add(
                    AddProduct(
                        productId: try ProductId(product), name: try ProductName(name), price: try Money(price),
                        category: try ProductCategory.parse(category, field: "category"), stock: try Stock(stock))))
        case .updateProduct(let product, let name, let price, let category):
            return .product(
                .update(
                    try UpdateProduct(
                        productId: try ProductId(product),
                        name: try name.map { raw throws(DomainError) in try ProductName(raw) },
                        price: try price.map { raw throws(DomainError) in try Money(raw) },
                        category: try category.map { raw throws(DomainError) in
                            try ProductCategory.parse(raw, field: "category")
                        })))
        case .restockProduct(let product, let quantity):
            return .product(
                .restock(RestockProduct(productId: try ProductId(product), quantity: try Quantity(quantity))))
        case .removeProduct(let product):
            return .product(.remove(RemoveProduct(productId: try ProductId(product))))
        case .purchaseProduct(let order, let user, let product, let quantity):
            return .product(
                .purchase(
                    PurchaseProduct(
                        orderId: try OrderId(order), userId: try UserId(user), productId: try ProductId(product),
                        quantity: try Quantity(quantity))))
        }
    }
}

/// Draws raw commands from a small universe of ids and values, valid and invalid.
struct CommandGenerator {
    var random: SeededGenerator

    static let longName = String(repeating: "n", count: 101)
    static let longTitle = String(repeating: "t", count: 201)
    static let longContent = String(repeating: "c", count: 50_001)

    /// Commands drawn so far; ids come from a window that slides with it, so old ids keep
    /// colliding while fresh ones keep arriving (ids are never reused, so a fixed set runs out).
    var drawn = 0

    /// Each raw value is invalid with this chance (in percent).
    static let invalidPercent = 3

    mutating func valid<T>(_ good: () -> T, else bad: [T]) -> T {
        random.chance(Self.invalidPercent) ? random.pick(bad) : good()
    }

    mutating func id(_ prefix: String, width: Int, every: Int) -> String {
        let base = drawn / every
        let n = base + Int.random(in: 0..<width, using: &random)
        return valid({ "\(prefix)\(n)" }, else: ["", "bad id", "x.y", String(repeating: "i", count: 65)])
    }

    mutating func user() -> String { id("u", width: 4, every: 25) }
    mutating func post() -> String { id("q", width: 4, every: 40) }
    mutating func product() -> String { id("pr", width: 3, every: 40) }
    mutating func order() -> String { id("o", width: 3, every: 5) }

    mutating func maybe<T>(_ percent: Int, _ make: (inout CommandGenerator) -> T) -> T? {
        random.chance(percent) ? make(&self) : nil
    }

    mutating func name() -> String {
        let good = random.pick(["Ann", "Bo", " Cy ", "Dee"])
        return valid({ good }, else: ["", "  ", "A\nB", Self.longName])
    }

    /// A few addresses everyone competes for, and a sliding window of others, in several cases.
    mutating func email() -> String {
        let local =
            random.chance(30)
            ? random.pick(["ann", "bo", "cy"]) : "e\(drawn / 25 + Int.random(in: 0..<5, using: &random))"
        let domain = random.pick(["example.com", "Example.COM"])
        let address = random.chance(20) ? "\(local.uppercased())@\(domain)" : "\(local)@\(domain)"
        let written = random.chance(10) ? " \(address) " : address
        return valid({ written }, else: ["bad", "x@y", "@example.com", ""])
    }

    mutating func gender() -> String {
        let good = random.pick(["male", "female", "other", "unknown"])
        return valid({ good }, else: ["robot", "Male"])
    }

    mutating func birthday() -> String {
        let good = random.pick(["1990-01-01", "2000-02-29", "1900-01-01", "2026-03-01"])
        return valid({ good }, else: ["1899-12-31", "2023-02-29", "2030-01-01", "1990-1-1"])
    }

    mutating func subscription() -> String {
        let good = random.pick(["free", "premium", "enterprise"])
        return valid({ good }, else: ["gold", "Free"])
    }

    mutating func title() -> String {
        let good = random.pick(["Hello", "World", " Hello "])
        return valid({ good }, else: ["", "\t", Self.longTitle])
    }

    mutating func content() -> String {
        let good = random.pick(["", "Body", "Other body"])
        return valid({ good }, else: [Self.longContent])
    }

    mutating func price() -> String {
        let good = random.pick(["0", "0.01", "0.10", "19.99", "19.9", "5", "999999999.99"])
        return valid({ good }, else: ["-1", "1.234", "", "1e3", ".5", "1000000000"])
    }

    mutating func category() -> String {
        let good = random.pick(["electronics", "clothing", "food"])
        return valid({ good }, else: ["books"])
    }

    mutating func stock() -> Int {
        let good = random.pick([0, 0, 1, 2, 3, 5, 100, 1_000_000_000])
        return valid({ good }, else: [-1, 1_000_000_001])
    }

    mutating func restockQuantity() -> Int {
        let good = random.pick([1, 2, 10, 1000, 999_999_999, 1_000_000_000])
        return valid({ good }, else: [0, -5])
    }

    /// Purchase quantities stay at most 1,000,000: unit price × quantity then fits in Int64
    /// (the overflow beyond that is a known bug, tested in PurchaseTests).
    mutating func purchaseQuantity() -> Int {
        let good = random.pick([1, 1, 1, 2, 3, 5, 50, 1_000_000])
        return valid({ good }, else: [0, -1])
    }

    mutating func next() -> RawCommand {
        drawn += 1
        return switch Int.random(in: 0..<100, using: &random) {
        case 0..<15:
            .registerUser(
                user: user(), name: name(), email: email(), gender: maybe(50) { $0.gender() },
                birthday: maybe(30) { $0.birthday() }, subscription: maybe(50) { $0.subscription() })
        case 15..<25:
            .updateProfile(
                user: user(), name: maybe(40) { $0.name() }, email: maybe(50) { $0.email() },
                gender: maybe(30) { $0.gender() }, birthday: maybe(20) { $0.birthday() })
        case 25..<29: .changeSubscription(user: user(), subscription: subscription())
        case 29..<31: .deleteUser(user: user())
        case 31..<32: .forgetUser(user: user())
        case 32..<39: .createPost(post: post(), author: user(), title: title(), content: content())
        case 39..<44: .editPost(post: post(), title: maybe(50) { $0.title() }, content: maybe(50) { $0.content() })
        case 44..<46: .deletePost(post: post())
        case 46..<54:
            .addProduct(product: product(), name: name(), price: price(), category: category(), stock: stock())
        case 54..<59:
            .updateProduct(
                product: product(), name: maybe(40) { $0.name() }, price: maybe(50) { $0.price() },
                category: maybe(30) { $0.category() })
        case 59..<66: .restockProduct(product: product(), quantity: restockQuantity())
        case 66..<68: .removeProduct(product: product())
        default: .purchaseProduct(order: order(), user: user(), product: product(), quantity: purchaseQuantity())
        }
    }
}
