import LogbookApplication
import LogbookDomain
import LogbookJSON
import LogbookMemory
import LogbookTestSupport
import Testing

/// Answering queries from the read models (the in-memory store stands in for any).
@Suite("Query handler")
struct QueryHandlerTests {
    /// Read models with two users (one deleted), two posts, three products and two orders.
    private static func readModels() throws -> (InMemoryReadModelStore, Log) {
        var log = Log()
        log.record(try Events.registered("u1", name: "Ann", birthday: "1990-01-02", subscription: .premium))
        log.record(try Events.registered("u2", name: "Bob"))
        log.record(try Events.registered("u3", name: "Cid"))
        log.record(try Events.userDeleted("u3"))
        log.record(try Events.postCreated("x1", author: "u1", title: "One"))
        log.record(try Events.postCreated("x2", author: "u2", title: "Two"))
        log.record(try Events.productAdded("p1", name: "Green Tea", price: "2.50", category: .food, stock: 3))
        log.record(try Events.productAdded("p2", name: "Black tea", price: "3.10", category: .food, stock: 0))
        log.record(try Events.productAdded("p3", name: "T-shirt", price: "15", category: .clothing, stock: 8))
        log.record(try Events.purchase(order: "o1", user: "u1", product: "p1", quantity: 2, stockAfter: 1))
        log.record(
            try Events.purchase(order: "o2", user: "u1", product: "p3", quantity: 1, stockAfter: 7, unitPrice: "15.00"))
        let store = InMemoryReadModelStore()
        try store.apply(log.all, through: log.head)
        return (store, log)
    }

    private func answer(_ type: String, _ data: JSONValue, _ reader: some ReadModelReader) throws(ServiceError)
        -> JSONValue
    {
        try QueryHandler.answer(try QueryParser.parse(type: type, data: data), from: reader)
    }

    @Test func getAnswersTheView() throws {
        let (store, _) = try Self.readModels()
        #expect(try answer("GetUser", ["userId": "u1"], store) == (try store.user(UserId("u1")))?.json)
        #expect(
            JSONWriter.string(try answer("GetUser", ["userId": "u1"], store))
                == #"{"userId":"u1","name":"Ann","email":"u1@example.com","gender":"unknown","birthday":"1990-01-02","#
                + #""subscription":"premium","canAccessPremiumFeatures":true,"registeredAt":"2025-11-24T16:00:01.000Z","#
                + #""updatedAt":"2025-11-24T16:00:01.000Z"}"#)
        #expect(try answer("GetPost", ["postId": "x2"], store).objectValue?["title"] == "Two")
        #expect(
            JSONWriter.string(try answer("GetProduct", ["productId": "p3"], store))
                == #"{"productId":"p3","name":"T-shirt","price":"15.00","category":"clothing","stock":7,"#
                + #""isAvailable":true,"updatedAt":"2025-11-24T16:00:12.000Z"}"#)
    }

    @Test func missingAndDeletedThingsAreNotFound() throws {
        let (store, _) = try Self.readModels()
        let cases: [(String, JSONValue, String, String)] = [
            ("GetUser", ["userId": "u3"], "user", "u3"),
            ("GetUser", ["userId": "nobody"], "user", "nobody"),
            ("GetPost", ["postId": "x9"], "post", "x9"),
            ("GetProduct", ["productId": "p9"], "product", "p9"),
        ]
        for (type, data, entity, id) in cases {
            let error = #expect(throws: ServiceError.self) { try answer(type, data, store) }
            #expect(error?.code == .notFound)
            #expect(error?.message == "\(entity) '\(id)' does not exist")
            #expect(error?.details.map(\.key) == ["entity", "id"])
            #expect(error?.details.map(\.value) == [.string(entity), .string(id)])
        }
    }

    @Test func listsAnswerItemsPageAndTotal() throws {
        let (store, _) = try Self.readModels()
        let users = try answer("ListUsers", ["perPage": 1, "page": 2], store)
        #expect(
            users == ["items": [try #require(try store.user(UserId("u2"))).json], "page": 2, "perPage": 1, "total": 2])
        #expect(users.objectValue?.keys == ["items", "page", "perPage", "total"])

        let defaults = try answer("ListUsers", [:], store)
        #expect(defaults.objectValue?["page"] == 1)
        #expect(defaults.objectValue?["perPage"] == 20)
        #expect(defaults.objectValue?["items"]?.arrayValue?.count == 2)

        let posts = try answer("ListPosts", ["authorId": "u2"], store)
        #expect(posts.objectValue?["items"]?.arrayValue?.map { $0.objectValue?["postId"] } == ["x2"])
        #expect(posts.objectValue?["total"] == 1)
        #expect(try answer("ListPosts", [:], store).objectValue?["total"] == 2)
        #expect(
            try answer("ListPosts", ["authorId": "u9"], store) == ["items": [], "page": 1, "perPage": 20, "total": 0])

        let orders = try answer("ListOrders", ["userId": "u1"], store)
        #expect(orders.objectValue?["items"]?.arrayValue?.map { $0.objectValue?["orderId"] } == ["o1", "o2"])
        #expect(orders.objectValue?["items"]?.arrayValue?.first?.objectValue?["totalPrice"] == "5.00")
        #expect(try answer("ListOrders", ["userId": "u2"], store).objectValue?["total"] == 0)
    }

    @Test func productListsApplyTheirFilters() throws {
        let (store, _) = try Self.readModels()
        func ids(_ data: JSONValue) throws -> [String] {
            let result = try answer("ListProducts", data, store)
            return result.objectValue?["items"]?.arrayValue?.compactMap { $0.objectValue?["productId"]?.stringValue }
                ?? []
        }
        #expect(try ids([:]) == ["p1", "p2", "p3"])
        #expect(try ids(["category": "food"]) == ["p1", "p2"])
        #expect(try ids(["category": "electronics"]) == [])
        #expect(try ids(["inStockOnly": true]) == ["p1", "p3"])
        #expect(try ids(["inStockOnly": false]) == ["p1", "p2", "p3"])
        #expect(try ids(["search": "TEA"]) == ["p1", "p2"])
        #expect(try ids(["search": "-"]) == ["p3"])
        #expect(try ids(["category": "food", "inStockOnly": true, "search": "tea"]) == ["p1"])
        let paged = try answer("ListProducts", ["search": "t", "page": 2, "perPage": 2], store)
        #expect(paged.objectValue?["total"] == 3)
        #expect(paged.objectValue?["items"]?.arrayValue?.count == 1)
    }

    @Test func aFailingReaderAnswersUnavailable() {
        let reader = FailingReader()
        let queries: [Query] = [
            .getUser(try! UserId("u1")), .listUsers(.first), .getPost(try! PostId("p1")),
            .listPosts(authorId: nil, .first), .getProduct(try! ProductId("p1")),
            .listProducts(ProductFilter(), .first), .listOrders(userId: try! UserId("u1"), .first),
        ]
        for query in queries {
            let error = #expect(throws: ServiceError.self, "\(query.typeName)") {
                try QueryHandler.answer(query, from: reader)
            }
            // The cause, never the store's own words or path, which stay for the process log.
            #expect(error?.code == .unavailable)
            #expect(error?.message == "the read models are unavailable: disk full")
            #expect(error?.serverDetail?.contains("/srv/q/readmodels-1.sqlite3: disk on fire") == true)
        }
    }
}

/// A reader whose every call fails.
final class FailingReader: ReadModelReader {
    private var failure: ReadModelStoreError {
        .unavailable("/srv/q/readmodels-1.sqlite3: disk on fire", cause: .diskFull)
    }

    func checkpoint() throws(ReadModelStoreError) -> Int64 { throw failure }
    func user(_ id: UserId) throws(ReadModelStoreError) -> UserView? { throw failure }
    func users(page: Int, perPage: Int) throws(ReadModelStoreError) -> Page<UserView> { throw failure }
    func post(_ id: PostId) throws(ReadModelStoreError) -> PostView? { throw failure }
    func posts(authorId: UserId?, page: Int, perPage: Int) throws(ReadModelStoreError) -> Page<PostView> {
        throw failure
    }
    func product(_ id: ProductId) throws(ReadModelStoreError) -> ProductView? { throw failure }
    func products(_ filter: ProductFilter, page: Int, perPage: Int) throws(ReadModelStoreError) -> Page<ProductView> {
        throw failure
    }
    func orders(userId: UserId, page: Int, perPage: Int) throws(ReadModelStoreError) -> Page<OrderView> {
        throw failure
    }
    func counts() throws(ReadModelStoreError) -> ReadModelCounts { throw failure }
}
