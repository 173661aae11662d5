import LogbookApplication
import LogbookDomain
import LogbookTestSupport
import Testing

/// Paging, ordering and filters of the list queries, on every store.
@Suite("Lists, on every read-model store")
struct ListContractTests {
    @Test(arguments: ReadModelStoreKind.allCases)
    func pagesCoverTheListInCreationOrderWithTheTotal(kind: ReadModelStoreKind) throws {
        let harness = try ReadModelHarness(kind)
        var log = Log()
        // Ids whose sort order differs from creation order.
        let ids = ["u9", "u1", "u5", "u3", "u7", "u2", "u8"]
        for id in ids { log.record(try Events.registered(id)) }
        try harness.catchUp(log)

        var seen: [String] = []
        for page in 1...3 {
            let result = try harness.reader.users(page: page, perPage: 3)
            #expect(result.page == page)
            #expect(result.perPage == 3)
            #expect(result.total == 7)
            #expect(result.items.count == (page < 3 ? 3 : 1))
            seen += result.items.map(\.userId.rawValue)
        }
        #expect(seen == ids)
        let beyond = try harness.reader.users(page: 4, perPage: 3)
        #expect(beyond.items.isEmpty)
        #expect(beyond.total == 7)
        #expect(try harness.reader.users(page: 1, perPage: 100).items.map(\.userId.rawValue) == ids)
        #expect(try harness.reader.users(page: 7, perPage: 1).items.map(\.userId.rawValue) == ["u8"])
        let huge = try harness.reader.users(page: Int.max, perPage: 100)
        #expect(huge.items.isEmpty)
        #expect(huge.total == 7)
        #expect(huge.page == Int.max)
    }

    @Test(arguments: ReadModelStoreKind.allCases)
    func updatesKeepARowInPlaceAndDeletesCloseTheGap(kind: ReadModelStoreKind) throws {
        let harness = try ReadModelHarness(kind)
        var log = Log()
        for id in ["a", "b", "c", "d"] { log.record(try Events.productAdded(id, name: "Item \(id)")) }
        log.record(try Events.productUpdated("a", name: "Renamed"))
        log.record(try Events.productRestocked("b", quantity: 1, stock: 11))
        log.record(try Events.productRemoved("c"))
        try harness.catchUp(log)
        let page = try harness.reader.products(page: 1, perPage: 2)
        #expect(page.items.map(\.productId.rawValue) == ["a", "b"])
        #expect(page.total == 3)
        #expect(try harness.reader.products(page: 2, perPage: 2).items.map(\.productId.rawValue) == ["d"])
        // Later rows come after, however their ids sort.
        log.record(try Events.productAdded("0", name: "Zero"))
        try harness.catchUp(log)
        #expect(
            try harness.reader.products(page: 1, perPage: 10).items.map(\.productId.rawValue) == ["a", "b", "d", "0"])
    }

    @Test(arguments: ReadModelStoreKind.allCases)
    func pagingBelowOneIsServedAsOne(kind: ReadModelStoreKind) throws {
        let harness = try ReadModelHarness(kind)
        var log = Log()
        for id in ["u1", "u2"] { log.record(try Events.registered(id)) }
        try harness.catchUp(log)
        let page = try harness.reader.users(page: 0, perPage: 0)
        #expect(page.page == 1)
        #expect(page.perPage == 1)
        #expect(page.items.map(\.userId.rawValue) == ["u1"])
        #expect(page.total == 2)
    }

    @Test(arguments: ReadModelStoreKind.allCases)
    func postsFilterByAuthor(kind: ReadModelStoreKind) throws {
        let harness = try ReadModelHarness(kind)
        var log = Log()
        log.record(try Events.registered("u1"))
        log.record(try Events.registered("u2"))
        log.record(try Events.postCreated("p1", author: "u1"))
        log.record(try Events.postCreated("p2", author: "u2"))
        log.record(try Events.postCreated("p3", author: "u1"))
        log.record(try Events.postCreated("p4", author: "u1"))
        log.record(try Events.postDeleted("p3"))
        try harness.catchUp(log)
        let byAnn = try harness.reader.posts(authorId: UserId("u1"), page: 1, perPage: 1)
        #expect(byAnn.items.map(\.postId.rawValue) == ["p1"])
        #expect(byAnn.total == 2)
        #expect(
            try harness.reader.posts(authorId: UserId("u1"), page: 2, perPage: 1).items.map(\.postId.rawValue)
                == ["p4"])
        #expect(
            try harness.reader.posts(authorId: nil, page: 1, perPage: 10).items.map(\.postId.rawValue) == [
                "p1", "p2", "p4",
            ])
        #expect(try harness.reader.posts(authorId: UserId("nobody"), page: 1, perPage: 10).total == 0)
        // A deleted author's posts stay: only PostDeleted removes a post.
        log.record(try Events.userDeleted("u2"))
        try harness.catchUp(log)
        #expect(try harness.reader.posts(authorId: UserId("u2"), page: 1, perPage: 10).total == 1)
    }

    @Test(arguments: ReadModelStoreKind.allCases)
    func ordersListByBuyer(kind: ReadModelStoreKind) throws {
        let harness = try ReadModelHarness(kind)
        var log = Log()
        log.record(try Events.registered("u1"))
        log.record(try Events.registered("u2"))
        log.record(try Events.productAdded("p1", stock: 100))
        var stock = 100
        for (index, user) in ["u1", "u2", "u1", "u1", "u2"].enumerated() {
            stock -= 1
            log.record(
                try Events.purchase(order: "o\(index)", user: user, product: "p1", quantity: 1, stockAfter: stock))
        }
        try harness.catchUp(log)
        let first = try harness.reader.orders(userId: UserId("u1"), page: 1, perPage: 2)
        #expect(first.items.map(\.orderId.rawValue) == ["o0", "o2"])
        #expect(first.total == 3)
        #expect(
            try harness.reader.orders(userId: UserId("u1"), page: 2, perPage: 2).items.map(\.orderId.rawValue) == ["o3"]
        )
        #expect(
            try harness.reader.orders(userId: UserId("u2"), page: 1, perPage: 20).items.map(\.orderId.rawValue) == [
                "o1", "o4",
            ])
        #expect(try harness.reader.orders(userId: UserId("u3"), page: 1, perPage: 20).total == 0)
        #expect(try harness.reader.product(ProductId("p1"))?.stock == 95)
    }

    /// Products for the filter tests: name, category, stock.
    private static let catalogue: [(String, String, ProductCategory, Int)] = [
        ("p1", "Green Tea", .food, 5),
        ("p2", "Black tea", .food, 0),
        ("p3", "TEA cosy", .clothing, 2),
        ("p4", "100% cotton shirt", .clothing, 1),
        ("p5", "1000 cotton buds", .food, 3),
        ("p6", "snake_case mug", .electronics, 4),
        ("p7", "snakecase plate", .electronics, 0),
        ("p8", "Äpfel aus Österreich", .food, 1),
        ("p9", "ÉCLAIR au café", .food, 1),
        ("p10", "Straße", .clothing, 1),
        ("p11", "Ünïcödé \u{1F375} matcha", .food, 1),
        ("p12", "it's \"quoted\" [brackets] *star* back\\slash", .electronics, 1),
    ]

    private static func catalogueHarness(_ kind: ReadModelStoreKind) throws -> ReadModelHarness {
        let harness = try ReadModelHarness(kind)
        var log = Log()
        for (id, name, category, stock) in catalogue {
            log.record(try Events.productAdded(id, name: name, category: category, stock: stock))
        }
        try harness.catchUp(log)
        return harness
    }

    private static func ids(
        _ reader: any ReadModelReader, category: ProductCategory? = nil, inStockOnly: Bool = false,
        search: String? = nil
    ) throws -> [String] {
        let page = try reader.products(
            category: category, inStockOnly: inStockOnly, search: search, page: 1, perPage: 100)
        #expect(page.total == page.items.count)
        return page.items.map(\.productId.rawValue)
    }

    @Test(arguments: ReadModelStoreKind.allCases)
    func productsFilterByCategoryAndStock(kind: ReadModelStoreKind) throws {
        let harness = try Self.catalogueHarness(kind)
        let reader = harness.reader
        #expect(try Self.ids(reader, category: .food) == ["p1", "p2", "p5", "p8", "p9", "p11"])
        #expect(try Self.ids(reader, category: .electronics) == ["p6", "p7", "p12"])
        #expect(try Self.ids(reader, inStockOnly: true).count == 10)
        #expect(!(try Self.ids(reader, inStockOnly: true)).contains("p2"))
        #expect(try Self.ids(reader, category: .electronics, inStockOnly: true) == ["p6", "p12"])
        #expect(try Self.ids(reader, category: .food, inStockOnly: true, search: "tea") == ["p1"])
        let paged = try reader.products(category: .food, inStockOnly: true, page: 2, perPage: 2)
        #expect(paged.items.map(\.productId.rawValue) == ["p8", "p9"])
        #expect(paged.total == 5)
    }

    @Test(
        "search is a case-insensitive substring match with no wildcards",
        arguments: ReadModelStoreKind.allCases)
    func productsSearchByName(kind: ReadModelStoreKind) throws {
        let harness = try Self.catalogueHarness(kind)
        let cases: [(String, [String])] = [
            ("tea", ["p1", "p2", "p3"]),
            ("TEA", ["p1", "p2", "p3"]),
            ("tEa C", ["p3"]),
            ("%", ["p4"]),
            ("100%", ["p4"]),
            ("1%0", []),
            ("_", ["p6"]),
            ("snake_case", ["p6"]),
            ("e_a", []),
            ("cotton", ["p4", "p5"]),
            ("äpfel", ["p8"]),
            ("ÄPFEL", ["p8"]),
            ("österreich", ["p8"]),
            ("éclair", ["p9"]),
            ("CAFÉ", ["p9"]),
            ("cafe", []),
            ("STRASSE", []),
            ("straße", ["p10"]),
            ("ÜNÏCÖDÉ \u{1F375}", ["p11"]),
            ("\u{1F375}", ["p11"]),
            ("'", ["p12"]),
            ("\"quoted\"", ["p12"]),
            ("[brackets]", ["p12"]),
            ("*star*", ["p12"]),
            ("back\\slash", ["p12"]),
            ("?", []),
            ("nothing like it", []),
            ("tea\u{0}", []),
            ("\u{0}", []),
            (" ", ["p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9", "p11", "p12"]),
            ("", ["p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9", "p10", "p11", "p12"]),
        ]
        for (search, expected) in cases {
            #expect(try Self.ids(harness.reader, search: search) == expected, "search \(search.debugDescription)")
        }
    }

    @Test(arguments: ReadModelStoreKind.allCases)
    func searchFollowsRenames(kind: ReadModelStoreKind) throws {
        let harness = try ReadModelHarness(kind)
        var log = Log()
        log.record(try Events.productAdded("p1", name: "Coffee"))
        try harness.catchUp(log)
        #expect(try Self.ids(harness.reader, search: "coff") == ["p1"])
        log.record(try Events.productUpdated("p1", name: "Herbal Infusion"))
        try harness.catchUp(log)
        #expect(try Self.ids(harness.reader, search: "coff") == [])
        #expect(try Self.ids(harness.reader, search: "INFUSION") == ["p1"])
    }

    @Test(arguments: ReadModelStoreKind.allCases)
    func countsAreLiveRows(kind: ReadModelStoreKind) throws {
        let harness = try ReadModelHarness(kind)
        #expect(try harness.reader.counts() == ReadModelCounts())
        var log = Log()
        log.record(try Events.registered("u1"))
        log.record(try Events.registered("u2"))
        log.record(try Events.postCreated("p1", author: "u1"))
        log.record(try Events.productAdded("x1", stock: 2))
        log.record(try Events.productAdded("x2"))
        log.record(try Events.purchase(order: "o1", user: "u2", product: "x1", quantity: 1, stockAfter: 1))
        log.record(try Events.userDeleted("u2"))
        log.record(try Events.productRemoved("x2"))
        try harness.catchUp(log)
        #expect(try harness.reader.counts() == ReadModelCounts(users: 1, posts: 1, products: 1, orders: 1))
    }
}
