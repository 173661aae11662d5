import LogbookApplication
import LogbookDomain
import LogbookJSON
import LogbookTestSupport
import Testing

/// Random logs through every store, in random batches: every store must hold the same
/// rows and give the same answer to every query.
@Suite("Every store answers alike")
struct DifferentialTests {
    @Test(arguments: [1, 7, 2024, 0xDEAD_BEEF] as [UInt64])
    func randomLogsGiveTheSameAnswers(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let log = try RandomLog.make(steps: 1_200, using: &random)
        let harnesses = try ReadModelStoreKind.allCases.map { try ReadModelHarness($0) }
        var next = 0
        while next < log.all.count {
            let batch = Array(log.all[next..<min(next + Int.random(in: 1...600, using: &random), log.all.count)])
            for harness in harnesses { try harness.store.apply(batch, through: batch.last!.position) }
            next += batch.count
        }
        let reference = try harnesses[0].snapshot()
        #expect(reference.checkpoint == log.head)
        #expect(reference.counts.users > 0 && reference.counts.orders > 0, "seed \(seed)")
        for harness in harnesses.dropFirst() {
            #expect(try harness.snapshot() == reference, "\(harness.kind), seed \(seed)")
        }
        for _ in 0..<300 {
            let query = RandomLog.query(names: log.productNames, ids: log.ids, using: &random)
            let answers = harnesses.map { harness in
                Result { () throws(ServiceError) in try QueryHandler.answer(query, from: harness.reader) }
            }
            for (harness, answer) in zip(harnesses, answers).dropFirst() {
                #expect(answer == answers[0], "\(harness.kind), seed \(seed): \(query)")
            }
        }
    }
}

/// Builds plausible logs: creations, changes and deletions of every kind (some of them
/// about things already deleted), purchases, email claims, and names that make searching
/// interesting.
enum RandomLog {
    static let names = [
        "Green Tea", "green TEA bags", "100% Cotton", "snake_case mug", "Äpfel", "ÄPFEL aus Wien", "ÉCLAIR",
        "éclair au café", "Straße", "İstanbul kebab", "ΣΊΣΥΦΟΣ", "σίσυφος", "ﬁsh ﬂakes", "🍵 matcha", "a%b_c",
        "Tea", "TEA", "tee", "Ⅻ o'clock", "e\u{301}tude",
    ]

    struct Built {
        var log = Log()
        var productNames: [String] = []
        var ids: [String] = []

        var all: [RecordedEvent] { log.all }
        var head: Int64 { log.head }
    }

    static func make(steps: Int, using random: inout SeededGenerator) throws -> Built {
        var built = Built()
        var users: [String] = []
        var posts: [String] = []
        var products: [String: Int] = [:]
        var counter = 0
        func newId(_ prefix: String) -> String {
            counter += 1
            built.ids.append("\(prefix)\(counter)")
            return "\(prefix)\(counter)"
        }
        for _ in 0..<steps {
            let roll = Int.random(in: 0..<100, using: &random)
            let anyUser = users.randomElement(using: &random) ?? "u0"
            let anyProduct = products.keys.sorted().randomElement(using: &random) ?? "p0"
            switch roll {
            case 0..<14:
                let id = newId("u")
                users.append(id)
                built.log.record(
                    try Events.registered(
                        id, name: random.pick(["Ann", "Bob", "Zoë"]), gender: random.pick(Gender.allCases),
                        birthday: random.chance(50)
                            ? "19\(Int.random(in: 10...99, using: &random))-0\(Int.random(in: 1...9, using: &random))-1\(Int.random(in: 0...9, using: &random))"
                            : nil,
                        subscription: random.pick(Subscription.allCases)))
                built.log.record(try Events.emailClaimed("\(id)@example.com", by: id))
            case 14..<20:
                built.log.record(
                    try Events.profileUpdated(
                        anyUser, name: random.chance(50) ? "Renamed" : nil,
                        email: random.chance(50) ? "new@example.com" : nil,
                        gender: random.chance(50) ? .other : nil, birthday: random.chance(30) ? "2000-01-01" : nil))
            case 20..<25:
                built.log.record(
                    try Events.subscriptionChanged(anyUser, from: .free, to: random.pick(Subscription.allCases)))
            case 25..<28:
                built.log.record(try Events.userDeleted(anyUser))
                users.removeAll { $0 == anyUser }
            case 28..<38:
                let id = newId("x")
                posts.append(id)
                built.log.record(
                    try Events.postCreated(
                        id, author: anyUser, title: "Title \(id)", content: random.chance(10) ? "a\u{0}b" : "Body"))
            case 38..<42:
                built.log.record(
                    try Events.postEdited(
                        posts.randomElement(using: &random) ?? "x0", title: random.chance(50) ? "Edited" : nil,
                        content: "New"))
            case 42..<44:
                let id = posts.randomElement(using: &random) ?? "x0"
                built.log.record(try Events.postDeleted(id))
                posts.removeAll { $0 == id }
            case 44..<56:
                let id = newId("p")
                let name = random.pick(names)
                built.productNames.append(name)
                products[id] = Int.random(in: 0...5, using: &random)
                built.log.record(
                    try Events.productAdded(
                        id, name: name,
                        price: "\(Int.random(in: 0...99, using: &random)).\(Int.random(in: 10...99, using: &random))",
                        category: random.pick(ProductCategory.allCases), stock: products[id]!))
            case 56..<61:
                let name = random.chance(50) ? random.pick(names) : nil
                if let name { built.productNames.append(name) }
                built.log.record(
                    try Events.productUpdated(
                        anyProduct, name: name, price: random.chance(50) ? "1.05" : nil,
                        category: random.chance(50) ? random.pick(ProductCategory.allCases) : nil))
            case 61..<66:
                let stock = (products[anyProduct] ?? 0) + 3
                products[anyProduct] = stock
                built.log.record(try Events.productRestocked(anyProduct, quantity: 3, stock: stock))
            case 66..<68:
                built.log.record(try Events.productRemoved(anyProduct))
                products[anyProduct] = nil
            default:
                let stock = products[anyProduct] ?? 0
                guard stock > 0 else { continue }
                products[anyProduct] = stock - 1
                built.log.record(
                    try Events.purchase(
                        order: newId("o"), user: anyUser, product: anyProduct, quantity: 1, stockAfter: stock - 1))
            }
        }
        return built
    }

    /// A random query, mostly about things that exist.
    static func query(names: [String], ids: [String], using random: inout SeededGenerator) -> Query {
        let page = try! PageRequest(
            page: Int.random(in: 1...4, using: &random), perPage: Int.random(in: 1...12, using: &random))
        let id = random.chance(90) ? random.pick(ids) : "missing"
        switch Int.random(in: 0..<8, using: &random) {
        case 0: return .getUser(try! UserId(id))
        case 1: return .listUsers(page)
        case 2: return .getPost(try! PostId(id))
        case 3: return .listPosts(authorId: random.chance(50) ? try! UserId(id) : nil, page)
        case 4: return .getProduct(try! ProductId(id))
        case 5: return .listOrders(userId: try! UserId(id), page)
        default:
            return .listProducts(
                ProductFilter(
                    category: random.chance(40) ? random.pick(ProductCategory.allCases) : nil,
                    inStockOnly: random.chance(40), search: random.chance(80) ? search(names, &random) : nil),
                page)
        }
    }

    /// A piece of a known name with its case shuffled, or a text full of special characters.
    private static func search(_ names: [String], _ random: inout SeededGenerator) -> String {
        guard random.chance(80), let name = names.randomElement(using: &random) else {
            return random.pick(["%", "_", "", " ", "\u{0}", "i", "I", "ı", "ss", "σ", "fi", "e", "'", "É"])
        }
        let characters = Array(name)
        let start = Int.random(in: 0..<characters.count, using: &random)
        let end = Int.random(in: start...characters.count, using: &random)
        return characters[start..<end].map { random.chance(50) ? $0.uppercased() : String($0) }.joined()
    }
}
