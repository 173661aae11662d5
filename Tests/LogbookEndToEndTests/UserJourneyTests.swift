import LogbookApplication
import LogbookClient
import LogbookJSON
import Testing

/// The whole journey of ARCHITECTURE §1 against real worker and query processes.
@Suite("End to end: the user journey", .serialized)
struct UserJourneyTests {
    @Test("register, add products, buy until the stock runs out, post, edit with an expected version")
    func journey() async throws {
        let cluster = try await ServiceCluster.started()
        let client = try cluster.client()
        defer { client.close() }

        let registered = try await client.send(
            type: "RegisterUser", data: ["userId": "ann", "name": "Ann", "email": "Ann@Example.com"])
        #expect(registered.events.first?.type == "UserRegistered")
        _ = try await client.send(
            type: "AddProduct",
            data: ["productId": "tea", "name": "Green tea", "price": "3.10", "category": "food", "stock": 3])
        _ = try await client.send(
            type: "AddProduct",
            data: ["productId": "mug", "name": "Mug", "price": "7.00", "category": "clothing", "stock": 10])

        // Buy until the tea runs out: 2 + 1 succeed, then the product is not available.
        let first = try await client.send(
            type: "PurchaseProduct", data: ["orderId": "o1", "userId": "ann", "productId": "tea", "quantity": 2])
        #expect(first.events.map(\.type) == ["ProductPurchased", "OrderPlaced"])
        await #expect(throws: LogbookClientError.self) {
            _ = try await client.send(
                type: "PurchaseProduct", data: ["orderId": "o2", "userId": "ann", "productId": "tea", "quantity": 2])
        }
        let last = try await client.send(
            type: "PurchaseProduct", data: ["orderId": "o3", "userId": "ann", "productId": "tea", "quantity": 1])
        do {
            _ = try await client.send(
                type: "PurchaseProduct", data: ["orderId": "o4", "userId": "ann", "productId": "tea", "quantity": 1])
            Issue.record("a purchase of a sold-out product was accepted")
        } catch {
            #expect(error.rejectionCode == "product_not_available")
        }

        // Read your writes: the query process answers once it has applied the purchase.
        let tea = try await client.query(type: "GetProduct", data: ["productId": "tea"], minPosition: last.position)
        #expect(tea.position >= last.position)
        #expect(tea.result.objectValue?["stock"] == .int(0))
        #expect(tea.result.objectValue?["isAvailable"] == .bool(false))
        let orders = try await client.query(type: "ListOrders", data: ["userId": "ann"], minPosition: last.position)
        #expect(orders.result.objectValue?["total"] == .int(2))
        #expect(
            orders.result.objectValue?["items"]?.arrayValue?.first?.objectValue?["totalPrice"] == .string("6.20"))
        let inStock = try await client.query(
            type: "ListProducts", data: ["inStockOnly": true], minPosition: last.position)
        #expect(
            inStock.result.objectValue?["items"]?.arrayValue?.compactMap { $0.objectValue?["productId"] } == ["mug"])

        // A post, edited with the right expected version, then refused with a stale one.
        let created = try await client.send(
            type: "CreatePost", data: ["postId": "hello", "authorId": "ann", "title": "Hello", "content": "First post"])
        let version = try #require(created.events.first?.version)
        let edited = try await client.send(
            type: "EditPost", data: ["postId": "hello", "title": "Hello again"], expectedVersion: .exactly(version))
        do {
            _ = try await client.send(
                type: "EditPost", data: ["postId": "hello", "title": "Stale"], expectedVersion: .exactly(version))
            Issue.record("an edit with a stale expected version was accepted")
        } catch {
            #expect(error.rejectionCode == "wrong_expected_version")
        }
        let post = try await client.query(type: "GetPost", data: ["postId": "hello"], minPosition: edited.position)
        #expect(post.result.objectValue?["title"] == .string("Hello again"))

        // The email is unique, case-insensitively.
        do {
            _ = try await client.send(
                type: "RegisterUser", data: ["userId": "bob", "name": "Bob", "email": "ann@example.COM"])
            Issue.record("a second user got a taken email")
        } catch {
            #expect(error.rejectionCode == "email_taken")
        }
    }
}

extension LogbookClientError {
    /// The server's error code when this is a rejection.
    var rejectionCode: String? {
        if case .rejected(let reply) = self { reply.code } else { nil }
    }
}

extension Error {
    var rejectionCode: String? { (self as? LogbookClientError)?.rejectionCode }
}
