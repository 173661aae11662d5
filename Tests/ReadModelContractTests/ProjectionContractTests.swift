import LogbookApplication
import LogbookDomain
import LogbookJSON
import LogbookTestSupport
import Testing

/// What each event does to the read models, on every store.
@Suite("Projections, on every read-model store")
struct ProjectionContractTests {
    @Test(arguments: ReadModelStoreKind.allCases)
    func userRegisteredCreatesTheUser(kind: ReadModelStoreKind) throws {
        let harness = try ReadModelHarness(kind)
        var log = Log()
        log.record(try Events.registered("u1", name: "Ann", email: "Ann@Example.com", gender: .female))
        log.record(
            try Events.registered(
                "u2", name: "Bob", gender: .male, birthday: "1990-02-28", subscription: .enterprise))
        try harness.catchUp(log)

        let ann = try #require(try harness.reader.user(UserId("u1")))
        #expect(
            ann
                == UserView(
                    userId: try UserId("u1"), name: "Ann", email: "Ann@Example.com", gender: .female, birthday: nil,
                    subscription: .free, registeredAt: log.time(of: 1), updatedAt: log.time(of: 1)))
        #expect(!ann.canAccessPremiumFeatures)
        // The exact wire shape, keys in order, birthday left out.
        #expect(
            JSONWriter.string(ann.json)
                == #"{"userId":"u1","name":"Ann","email":"Ann@Example.com","gender":"female","subscription":"free","#
                + #""canAccessPremiumFeatures":false,"registeredAt":"2025-11-24T16:00:01.000Z","#
                + #""updatedAt":"2025-11-24T16:00:01.000Z"}"#)

        let bob = try #require(try harness.reader.user(UserId("u2")))
        #expect(bob.birthday?.description == "1990-02-28")
        #expect(bob.canAccessPremiumFeatures)
        #expect(
            JSONWriter.string(bob.json)
                == #"{"userId":"u2","name":"Bob","email":"u2@example.com","gender":"male","birthday":"1990-02-28","#
                + #""subscription":"enterprise","canAccessPremiumFeatures":true,"#
                + #""registeredAt":"2025-11-24T16:00:02.000Z","updatedAt":"2025-11-24T16:00:02.000Z"}"#)
        #expect(try harness.reader.user(UserId("u3")) == nil)
    }

    @Test(arguments: ReadModelStoreKind.allCases)
    func profileUpdatesChangeOnlyTheGivenFields(kind: ReadModelStoreKind) throws {
        let harness = try ReadModelHarness(kind)
        var log = Log()
        log.record(try Events.registered("u1", name: "Ann", email: "ann@example.com", birthday: "1980-01-01"))
        log.record(try Events.profileUpdated("u1", name: "Anna"))
        try harness.catchUp(log)
        var user = try #require(try harness.reader.user(UserId("u1")))
        #expect(user.name == "Anna")
        #expect(user.email == "ann@example.com")
        #expect(user.gender == .unknown)
        #expect(user.birthday?.description == "1980-01-01")
        #expect(user.registeredAt == log.time(of: 1))
        #expect(user.updatedAt == log.time(of: 2))

        log.record(try Events.profileUpdated("u1", email: "anna@example.org", gender: .other, birthday: "1981-12-31"))
        try harness.catchUp(log)
        user = try #require(try harness.reader.user(UserId("u1")))
        #expect(user.name == "Anna")
        #expect(user.email == "anna@example.org")
        #expect(user.gender == .other)
        #expect(user.birthday?.description == "1981-12-31")
        #expect(user.registeredAt == log.time(of: 1))
        #expect(user.updatedAt == log.time(of: 3))
    }

    @Test(arguments: ReadModelStoreKind.allCases)
    func subscriptionChangesDecidePremiumAccess(kind: ReadModelStoreKind) throws {
        let harness = try ReadModelHarness(kind)
        var log = Log()
        log.record(try Events.registered("u1"))
        log.record(try Events.subscriptionChanged("u1", from: .free, to: .premium))
        try harness.catchUp(log)
        var user = try #require(try harness.reader.user(UserId("u1")))
        #expect(user.subscription == .premium)
        #expect(user.canAccessPremiumFeatures)
        #expect(user.json.objectValue?["canAccessPremiumFeatures"] == true)
        #expect(user.updatedAt == log.time(of: 2))

        log.record(try Events.subscriptionChanged("u1", from: .premium, to: .free))
        try harness.catchUp(log)
        user = try #require(try harness.reader.user(UserId("u1")))
        #expect(user.subscription == .free)
        #expect(!user.canAccessPremiumFeatures)
        #expect(user.updatedAt == log.time(of: 3))
    }

    @Test(arguments: ReadModelStoreKind.allCases)
    func deletedUsersAreGoneFromLookupsListsAndCounts(kind: ReadModelStoreKind) throws {
        let harness = try ReadModelHarness(kind)
        var log = Log()
        log.record(try Events.registered("u1"))
        log.record(try Events.registered("u2"))
        log.record(try Events.registered("u3"))
        log.record(try Events.userDeleted("u2"))
        try harness.catchUp(log)
        #expect(try harness.reader.user(UserId("u2")) == nil)
        let page = try harness.reader.users(page: 1, perPage: 10)
        #expect(page.items.map(\.userId.rawValue) == ["u1", "u3"])
        #expect(page.total == 2)
        #expect(try harness.reader.counts() == ReadModelCounts(users: 2))

        // Events about a user that is gone change nothing (a valid log has none).
        log.record(try Events.profileUpdated("u2", name: "Ghost"))
        log.record(try Events.subscriptionChanged("u2", from: .free, to: .premium))
        try harness.catchUp(log)
        #expect(try harness.reader.user(UserId("u2")) == nil)
        #expect(try harness.reader.counts() == ReadModelCounts(users: 2))
    }

    @Test(arguments: ReadModelStoreKind.allCases)
    func postsAreCreatedEditedAndDeleted(kind: ReadModelStoreKind) throws {
        let harness = try ReadModelHarness(kind)
        var log = Log()
        log.record(try Events.registered("u1"))
        log.record(try Events.postCreated("p1", author: "u1", title: "First", content: "Hello"))
        try harness.catchUp(log)
        var post = try #require(try harness.reader.post(PostId("p1")))
        #expect(
            post
                == PostView(
                    postId: try PostId("p1"), authorId: try UserId("u1"), title: "First", content: "Hello",
                    createdAt: log.time(of: 2), updatedAt: log.time(of: 2)))
        #expect(
            JSONWriter.string(post.json)
                == #"{"postId":"p1","authorId":"u1","title":"First","content":"Hello","#
                + #""createdAt":"2025-11-24T16:00:02.000Z","updatedAt":"2025-11-24T16:00:02.000Z"}"#)

        log.record(try Events.postEdited("p1", title: "Second"))
        log.record(try Events.postEdited("p1", content: "New body"))
        try harness.catchUp(log)
        post = try #require(try harness.reader.post(PostId("p1")))
        #expect(post.title == "Second")
        #expect(post.content == "New body")
        #expect(post.createdAt == log.time(of: 2))
        #expect(post.updatedAt == log.time(of: 4))

        log.record(try Events.postDeleted("p1"))
        try harness.catchUp(log)
        #expect(try harness.reader.post(PostId("p1")) == nil)
        #expect(try harness.reader.posts(authorId: nil, page: 1, perPage: 10).total == 0)
        #expect(try harness.reader.posts(authorId: UserId("u1"), page: 1, perPage: 10).items.isEmpty)
        #expect(try harness.reader.counts() == ReadModelCounts(users: 1))
    }

    @Test(arguments: ReadModelStoreKind.allCases)
    func postContentIsKeptExactly(kind: ReadModelStoreKind) throws {
        let harness = try ReadModelHarness(kind)
        let contents = [
            "", "line one\nline two\ttabbed", "nul \u{0} inside \u{0}\u{0} twice", "\u{0}", "emoji 🎉 and e\u{301}",
            "private use \u{E000}\u{E001} and a nul \u{0}", String(repeating: "long ", count: 10_000),
        ]
        var log = Log()
        log.record(try Events.registered("u1"))
        for (index, content) in contents.enumerated() {
            log.record(try Events.postCreated("p\(index)", author: "u1", content: content))
        }
        log.record(try Events.postEdited("p0", content: "edited \u{0} with a nul"))
        try harness.catchUp(log)
        #expect(try harness.reader.post(PostId("p0"))?.content == "edited \u{0} with a nul")
        for (index, content) in contents.enumerated().dropFirst() {
            #expect(try harness.reader.post(PostId("p\(index)"))?.content == content)
        }
    }

    @Test(arguments: ReadModelStoreKind.allCases)
    func productsFollowEveryProductEvent(kind: ReadModelStoreKind) throws {
        let harness = try ReadModelHarness(kind)
        var log = Log()
        log.record(try Events.productAdded("p1", name: "Tea", price: "2.5", category: .food, stock: 3))
        try harness.catchUp(log)
        var product = try #require(try harness.reader.product(ProductId("p1")))
        #expect(
            product
                == ProductView(
                    productId: try ProductId("p1"), name: "Tea", price: try Money("2.50"), category: .food, stock: 3,
                    updatedAt: log.time(of: 1)))
        #expect(product.isAvailable)
        #expect(
            JSONWriter.string(product.json)
                == #"{"productId":"p1","name":"Tea","price":"2.50","category":"food","stock":3,"isAvailable":true,"#
                + #""updatedAt":"2025-11-24T16:00:01.000Z"}"#)

        log.record(try Events.productUpdated("p1", name: "Green tea"))
        log.record(try Events.productUpdated("p1", price: "3", category: .clothing))
        try harness.catchUp(log)
        product = try #require(try harness.reader.product(ProductId("p1")))
        #expect(product.name == "Green tea")
        #expect(product.price.description == "3.00")
        #expect(product.category == .clothing)
        #expect(product.stock == 3)
        #expect(product.updatedAt == log.time(of: 3))

        log.record(try Events.registered("u1"))
        log.record(try Events.purchase(order: "o1", user: "u1", product: "p1", quantity: 3, stockAfter: 0))
        try harness.catchUp(log)
        product = try #require(try harness.reader.product(ProductId("p1")))
        #expect(product.stock == 0)
        #expect(!product.isAvailable)
        #expect(product.json.objectValue?["isAvailable"] == false)
        #expect(product.updatedAt == log.time(of: 5))

        // Stock is what the event says, not arithmetic on the row.
        log.record(try Events.productRestocked("p1", quantity: 5, stock: 7))
        try harness.catchUp(log)
        product = try #require(try harness.reader.product(ProductId("p1")))
        #expect(product.stock == 7)
        #expect(product.isAvailable)
        #expect(product.updatedAt == log.time(of: 7))

        log.record(try Events.productRemoved("p1"))
        try harness.catchUp(log)
        #expect(try harness.reader.product(ProductId("p1")) == nil)
        #expect(try harness.reader.products(page: 1, perPage: 10).total == 0)
        #expect(try harness.reader.products(category: .clothing, page: 1, perPage: 10).items.isEmpty)
        // The order stays.
        #expect(try harness.reader.counts() == ReadModelCounts(users: 1, products: 0, orders: 1))
    }

    @Test(arguments: ReadModelStoreKind.allCases)
    func ordersArePlacedOncePerId(kind: ReadModelStoreKind) throws {
        let harness = try ReadModelHarness(kind)
        var log = Log()
        log.record(try Events.registered("u1"))
        log.record(try Events.productAdded("p1", price: "19.99", stock: 100))
        log.record(
            try Events.purchase(order: "o1", user: "u1", product: "p1", quantity: 3, stockAfter: 97, unitPrice: "19.99")
        )
        try harness.catchUp(log)
        let orders = try harness.reader.orders(userId: UserId("u1"), page: 1, perPage: 10)
        let order = try #require(orders.items.first)
        #expect(
            order
                == OrderView(
                    orderId: try OrderId("o1"), userId: try UserId("u1"), productId: try ProductId("p1"), quantity: 3,
                    unitPrice: try Money("19.99"), totalPrice: try Money("59.97"), status: .pending,
                    placedAt: log.time(of: 4)))
        #expect(
            JSONWriter.string(order.json)
                == #"{"orderId":"o1","userId":"u1","productId":"p1","quantity":3,"unitPrice":"19.99","#
                + #""totalPrice":"59.97","status":"pending","placedAt":"2025-11-24T16:00:04.000Z"}"#)

        // A second OrderPlaced with the same id (never in a valid log) does not replace the first.
        log.record(try Events.orderPlaced("o1", user: "u1", product: "p1", quantity: 1, unitPrice: "1.00"))
        try harness.catchUp(log)
        #expect(try harness.reader.orders(userId: UserId("u1"), page: 1, perPage: 10).items == [order])
        #expect(try harness.reader.counts().orders == 1)
    }

    @Test(arguments: ReadModelStoreKind.allCases)
    func aSecondCreationOfAnIdKeepsTheFirstRow(kind: ReadModelStoreKind) throws {
        let harness = try ReadModelHarness(kind)
        var log = Log()
        log.record(try Events.registered("u1", name: "First"))
        log.record(try Events.postCreated("p1", author: "u1", title: "First"))
        log.record(try Events.productAdded("x1", name: "First"))
        log.record(try Events.registered("u1", name: "Second"))
        log.record(try Events.postCreated("p1", author: "u1", title: "Second"))
        log.record(try Events.productAdded("x1", name: "Second"))
        try harness.catchUp(log)
        #expect(try harness.reader.user(UserId("u1"))?.name == "First")
        #expect(try harness.reader.post(PostId("p1"))?.title == "First")
        #expect(try harness.reader.product(ProductId("x1"))?.name == "First")
        #expect(try harness.reader.counts() == ReadModelCounts(users: 1, posts: 1, products: 1))
        #expect(try harness.reader.checkpoint() == 6)
    }

    @Test(arguments: ReadModelStoreKind.allCases)
    func emailClaimsAndUnknownCategoriesAreSkippedButCounted(kind: ReadModelStoreKind) throws {
        let harness = try ReadModelHarness(kind)
        var log = Log()
        log.record(try Events.registered("u1", email: "ann@example.com"))
        log.record(try Events.emailClaimed("ann@example.com", by: "u1"))
        log.record(type: "SomethingElse", stream: "audit-1", data: "not even JSON")
        log.record(type: "EmailReleased", stream: "email-broken", data: "{}")  // skipped, so never decoded
        try harness.catchUp(log)
        #expect(try harness.reader.checkpoint() == 4)
        #expect(try harness.reader.counts() == ReadModelCounts(users: 1))
        #expect(try harness.snapshot().users.map(\.userId.rawValue) == ["u1"])
    }

    @Test(arguments: ReadModelStoreKind.allCases)
    func eventsOfOneBatchSeeEachOther(kind: ReadModelStoreKind) throws {
        let harness = try ReadModelHarness(kind)
        var log = Log()
        log.record(try Events.registered("u1"))
        log.record(try Events.profileUpdated("u1", name: "Zoe"))
        log.record(try Events.productAdded("p1", stock: 1))
        log.record(try Events.purchase(order: "o1", user: "u1", product: "p1", quantity: 1, stockAfter: 0))
        log.record(try Events.productRemoved("p1"))
        log.record(try Events.postCreated("x1", author: "u1"))
        log.record(try Events.postDeleted("x1"))
        try harness.store.apply(log.all, through: log.head)
        #expect(try harness.reader.user(UserId("u1"))?.name == "Zoe")
        #expect(try harness.reader.product(ProductId("p1")) == nil)
        #expect(try harness.reader.post(PostId("x1")) == nil)
        #expect(try harness.reader.counts() == ReadModelCounts(users: 1, posts: 0, products: 0, orders: 1))
    }
}
