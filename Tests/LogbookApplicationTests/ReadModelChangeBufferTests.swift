import LogbookApplication
import LogbookDomain
import LogbookTestSupport
import Testing

/// `ReadModelChangeBuffer` must have exactly the effect of the changes written to it, in
/// order, whatever rows exist already: checked against a plain model of `ReadModelChange`.
@Suite("Read-model change buffer")
struct ReadModelChangeBufferTests {
    /// Rows by table and id, each with the position it was created at.
    struct Model: Equatable {
        var users: [String: (UserView, Int64)] = [:]
        var posts: [String: (PostView, Int64)] = [:]
        var products: [String: (ProductView, Int64)] = [:]
        var orders: [String: (OrderView, Int64)] = [:]

        /// `ReadModelChange`'s rules, one change at a time.
        mutating func apply(_ change: ReadModelChange) {
            switch change {
            case .insertUser(let view, let position):
                if users[view.userId.rawValue] == nil { users[view.userId.rawValue] = (view, position) }
            case .updateUser(let id, let changes):
                if let (view, position) = users[id.rawValue] {
                    users[id.rawValue] = (changes.applied(to: view), position)
                }
            case .removeUser(let id): users[id.rawValue] = nil
            case .insertPost(let view, let position):
                if posts[view.postId.rawValue] == nil { posts[view.postId.rawValue] = (view, position) }
            case .updatePost(let id, let changes):
                if let (view, position) = posts[id.rawValue] {
                    posts[id.rawValue] = (changes.applied(to: view), position)
                }
            case .removePost(let id): posts[id.rawValue] = nil
            case .insertProduct(let view, let position):
                if products[view.productId.rawValue] == nil { products[view.productId.rawValue] = (view, position) }
            case .updateProduct(let id, let changes):
                if let (view, position) = products[id.rawValue] {
                    products[id.rawValue] = (changes.applied(to: view), position)
                }
            case .removeProduct(let id): products[id.rawValue] = nil
            case .insertOrder(let view, let position):
                if orders[view.orderId.rawValue] == nil { orders[view.orderId.rawValue] = (view, position) }
            }
        }

        static func == (lhs: Model, rhs: Model) -> Bool {
            func same<V: Equatable>(_ a: [String: (V, Int64)], _ b: [String: (V, Int64)]) -> Bool {
                a.count == b.count
                    && a.allSatisfy { key, row in b[key].map { $0.0 == row.0 && $0.1 == row.1 } ?? false }
            }
            return same(lhs.users, rhs.users) && same(lhs.posts, rhs.posts) && same(lhs.products, rhs.products)
                && same(lhs.orders, rhs.orders)
        }
    }

    /// A random change about one of three ids per table, with random field changes.
    static func randomChange(_ random: inout SeededGenerator, position: Int64) throws -> ReadModelChange {
        let at = Timestamp(millisecondsSinceEpoch: position * 1_000)
        let id = "x\(Int.random(in: 0..<3, using: &random))"
        let maybe = { (random: inout SeededGenerator, text: String) -> String? in random.chance(50) ? text : nil }
        switch Int.random(in: 0..<10, using: &random) {
        case 0:
            return .insertUser(
                UserView(
                    userId: try UserId(id), name: "n\(position)", email: "e\(position)@x.io", gender: .other,
                    birthday: nil, subscription: .free, registeredAt: at, updatedAt: at), position: position)
        case 1:
            return .updateUser(
                try UserId(id),
                UserChanges(
                    name: maybe(&random, "n\(position)"), email: maybe(&random, "e\(position)@x.io"),
                    gender: random.chance(30) ? .female : nil,
                    birthday: random.chance(30) ? try Birthday(recorded: "2000-01-02") : nil,
                    subscription: random.chance(30) ? .premium : nil, updatedAt: at))
        case 2: return .removeUser(try UserId(id))
        case 3:
            return .insertPost(
                PostView(
                    postId: try PostId(id), authorId: try UserId("a"), title: "t\(position)", content: "c",
                    createdAt: at, updatedAt: at), position: position)
        case 4:
            return .updatePost(
                try PostId(id),
                PostChanges(
                    title: maybe(&random, "t\(position)"), content: maybe(&random, "c\(position)"), updatedAt: at))
        case 5: return .removePost(try PostId(id))
        case 6:
            return .insertProduct(
                ProductView(
                    productId: try ProductId(id), name: "p\(position)", price: try Money(recorded: "1.00"),
                    category: .food, stock: Int(position), updatedAt: at), position: position)
        case 7:
            return .updateProduct(
                try ProductId(id),
                ProductChanges(
                    name: maybe(&random, "p\(position)"), price: random.chance(30) ? try Money(recorded: "2.50") : nil,
                    category: random.chance(30) ? .clothing : nil,
                    stock: random.chance(50) ? Int(position) : nil, updatedAt: at))
        case 8: return .removeProduct(try ProductId(id))
        default:
            return .insertOrder(
                OrderView(
                    orderId: try OrderId(id), userId: try UserId("a"), productId: try ProductId("p"), quantity: 1,
                    unitPrice: try Money(recorded: "1.00"), totalPrice: try Money(recorded: "1.00"), status: .pending,
                    placedAt: at), position: position)
        }
    }

    /// The texts a drained change carries, as `ReadModelChangeBuffer.textBytes` counts
    /// them: a row's ids and texts, an update's changed texts, nothing for a remove.
    static func heldText(_ change: ReadModelChange) -> Int {
        switch change {
        case .insertUser(let user, _): user.userId.rawValue.utf8.count + user.name.utf8.count + user.email.utf8.count
        case .updateUser(_, let changes): (changes.name?.utf8.count ?? 0) + (changes.email?.utf8.count ?? 0)
        case .insertPost(let post, _):
            post.postId.rawValue.utf8.count + post.authorId.rawValue.utf8.count + post.title.utf8.count
                + post.content.utf8.count
        case .updatePost(_, let changes): (changes.title?.utf8.count ?? 0) + (changes.content?.utf8.count ?? 0)
        case .insertProduct(let product, _): product.productId.rawValue.utf8.count + product.name.utf8.count
        case .updateProduct(_, let changes): changes.name?.utf8.count ?? 0
        case .insertOrder(let order, _):
            order.orderId.rawValue.utf8.count + order.userId.rawValue.utf8.count + order.productId.rawValue.utf8.count
        case .removeUser, .removePost, .removeProduct: 0
        }
    }

    @Test("drained changes have the effect of the changes written, from any starting rows, across drains")
    func sameEffect() throws {
        var random = SeededGenerator(seed: 77)
        for _ in 0..<1_500 {
            var position: Int64 = 0
            var direct = Model()
            // Rows that exist before the buffer starts (as from an earlier flush).
            for _ in 0..<Int.random(in: 0...8, using: &random) {
                position += 1
                direct.apply(try Self.randomChange(&random, position: position))
            }
            var buffered = direct
            var buffer = ReadModelChangeBuffer()
            for _ in 0..<Int.random(in: 1...25, using: &random) {
                position += 1
                let change = try Self.randomChange(&random, position: position)
                direct.apply(change)
                buffer.write(change)
                if random.chance(10) {
                    let held = buffer.textBytes
                    let drained = buffer.drain()
                    #expect(held == drained.reduce(0) { $0 + Self.heldText($1) })
                    for change in drained { buffered.apply(change) }
                    #expect(buffer.count == 0)
                    #expect(buffer.textBytes == 0)
                }
            }
            let held = buffer.textBytes
            let drained = buffer.drain()
            #expect(held == drained.reduce(0) { $0 + Self.heldText($1) })
            for change in drained { buffered.apply(change) }
            #expect(buffered == direct)
        }
    }

    @Test("an insert after updates of a row that may exist keeps those updates first")
    func insertAfterUpdate() throws {
        let at = Timestamp(millisecondsSinceEpoch: 5)
        let id = try UserId("u1")
        let view = UserView(
            userId: id, name: "New", email: "n@x.io", gender: .male, birthday: nil, subscription: .free,
            registeredAt: at, updatedAt: at)
        for exists in [true, false] {
            var direct = Model()
            if exists {
                direct.apply(
                    .insertUser(
                        UserView(
                            userId: id, name: "Old", email: "o@x.io", gender: .female, birthday: nil,
                            subscription: .enterprise, registeredAt: at, updatedAt: at), position: 1))
            }
            var buffered = direct
            var buffer = ReadModelChangeBuffer()
            for change: ReadModelChange in [
                .updateUser(id, UserChanges(name: "Renamed", updatedAt: at)), .insertUser(view, position: 9),
                .updateUser(id, UserChanges(subscription: .premium, updatedAt: at)),
            ] {
                direct.apply(change)
                buffer.write(change)
            }
            for change in buffer.drain() { buffered.apply(change) }
            #expect(buffered == direct)
            #expect(direct.users["u1"]?.0.name == (exists ? "Renamed" : "New"))
        }
    }

    @Test("many changes of one row come out as at most a remove, an insert and an update")
    func folds() throws {
        var buffer = ReadModelChangeBuffer()
        let at = Timestamp(millisecondsSinceEpoch: 0)
        let id = try ProductId("p1")
        buffer.write(
            .insertProduct(
                ProductView(
                    productId: id, name: "Tea", price: try Money(recorded: "1.00"), category: .food, stock: 1,
                    updatedAt: at), position: 1))
        for stock in 2...100 { buffer.write(.updateProduct(id, ProductChanges(stock: stock, updatedAt: at))) }
        buffer.write(.updateProduct(id, ProductChanges(name: "Green tea", updatedAt: at)))
        let drained = buffer.drain()
        #expect(drained.count == 2)
        #expect(drained.last == .updateProduct(id, ProductChanges(name: "Green tea", stock: 100, updatedAt: at)))
    }

    @Test("textBytes is the UTF-8 of the texts held: a replaced text leaves it, a removed row takes its texts")
    func textBytes() throws {
        var buffer = ReadModelChangeBuffer()
        let at = Timestamp(millisecondsSinceEpoch: 0)
        let id = try PostId("p1")
        let content = String(repeating: "é", count: 1_000)  // 2,000 bytes
        #expect(buffer.textBytes == 0)
        buffer.write(
            .insertPost(
                PostView(
                    postId: id, authorId: try UserId("u1"), title: "Hi", content: content, createdAt: at, updatedAt: at),
                position: 1))
        #expect(buffer.textBytes == 2 + 2 + 2 + 2_000)
        // An update is held beside the row it changes until the drain; a later one replaces its texts.
        buffer.write(.updatePost(id, PostChanges(content: "short", updatedAt: at)))
        #expect(buffer.textBytes == 2_006 + 5)
        buffer.write(.updatePost(id, PostChanges(content: "a bit longer", updatedAt: at)))
        #expect(buffer.textBytes == 2_006 + 12)
        // Updates of a row that may not exist, then its insert: the updates are handed back
        // in order, and still held.
        let other = try PostId("p2")
        buffer.write(.updatePost(other, PostChanges(title: "Edited", updatedAt: at)))
        buffer.write(
            .insertPost(
                PostView(
                    postId: other, authorId: try UserId("u1"), title: "T", content: "", createdAt: at, updatedAt: at),
                position: 2))
        #expect(buffer.textBytes == 2_018 + 6 + (2 + 2 + 1))
        buffer.write(.removePost(id))
        #expect(buffer.textBytes == 6 + 5)
        buffer.write(
            .insertOrder(
                OrderView(
                    orderId: try OrderId("o1"), userId: try UserId("u1"), productId: try ProductId("p9"), quantity: 1,
                    unitPrice: try Money(recorded: "1.00"), totalPrice: try Money(recorded: "1.00"), status: .pending,
                    placedAt: at), position: 3))
        #expect(buffer.textBytes == 11 + 6)
        _ = buffer.drain()
        #expect(buffer.textBytes == 0)
    }
}
