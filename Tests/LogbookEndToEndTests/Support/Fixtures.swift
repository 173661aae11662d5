import LogbookApplication
import LogbookClient
import LogbookJSON
import LogbookWire
import Testing

/// Command data the tests send.
enum Fixture {
    static func user(_ id: String, name: String? = nil, email: String? = nil) -> JSONObject {
        ["userId": .string(id), "name": .string(name ?? "User \(id)"), "email": .string(email ?? "\(id)@example.com")]
    }

    static func product(
        _ id: String, name: String? = nil, price: String = "1.00", category: String = "food", stock: Int = 10
    ) -> JSONObject {
        [
            "productId": .string(id), "name": .string(name ?? "Product \(id)"), "price": .string(price),
            "category": .string(category), "stock": .int(stock),
        ]
    }

    static func purchase(_ orderId: String, user: String, product: String, quantity: Int = 1) -> JSONObject {
        [
            "orderId": .string(orderId), "userId": .string(user), "productId": .string(product),
            "quantity": .int(quantity),
        ]
    }

    static func post(_ id: String, author: String, title: String? = nil, content: String = "Some text") -> JSONObject {
        [
            "postId": .string(id), "authorId": .string(author), "title": .string(title ?? "Post \(id)"),
            "content": .string(content),
        ]
    }
}

extension RecordedEvent {
    /// The event's feed topic, nil for internal categories (email claims).
    var topic: FeedTopic? { FeedTopic(category: category) }

    /// The envelope the wire carries for this event.
    var envelope: JSONValue { (try? WireEncoding.envelope(self)) ?? .null }
}

extension JSONValue {
    /// Member `key` of an object (nil for anything else).
    subscript(key: String) -> JSONValue? { objectValue?[key] }
}

/// The server's refusal of a request that must be refused; nil (and an issue) when it was
/// answered, or failed some other way.
func refusal<T>(_ body: () async throws -> T) async -> ServiceErrorReply? {
    do {
        let answer = try await body()
        Issue.record("expected a refusal, got \(answer)")
        return nil
    } catch {
        guard case .rejected(let reply)? = error as? LogbookClientError else {
            Issue.record("expected a refusal, got \(error)")
            return nil
        }
        return reply
    }
}

/// The result of a query that should be answered; nil (and an issue naming the error) when it was not.
func refusalOrAnswer(_ body: () async throws -> QueryAnswer) async -> JSONValue? {
    do {
        return try await body().result
    } catch {
        Issue.record("the query was not answered: \(error)")
        return nil
    }
}
