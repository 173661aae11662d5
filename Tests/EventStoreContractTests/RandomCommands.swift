import LogbookApplication
import LogbookJSON
import LogbookTestSupport

/// Random commands over a small universe of ids, so that they collide, conflict and
/// break rules often; a few carry invalid values or unknown types.
struct RandomCommands {
    var generator: SeededGenerator
    private var counter = 0

    init(seed: UInt64) { generator = SeededGenerator(seed: seed) }

    private mutating func pick<T>(_ choices: [T]) -> T { generator.pick(choices) }

    private mutating func id(_ prefix: String, _ count: Int) -> JSONValue {
        .string("\(prefix)\(Int.random(in: 1...count, using: &generator))")
    }

    private mutating func email() -> JSONValue {
        pick(["ann@example.com", "ANN@example.com", "bob@example.com", "cy@example.org", "not-an-email"])
    }

    mutating func next() -> CommandRequest {
        counter += 1
        // Now and then a retry of an earlier command id.
        let commandId =
            counter > 3 && Int.random(in: 0..<10, using: &generator) == 0
            ? "c\(Int.random(in: 1..<counter, using: &generator))" : "c\(counter)"
        let (type, data): (String, JSONValue)
        // Deletions are rare, since ids are never reused and a dead universe proves little.
        switch Int.random(in: 0..<40, using: &generator) {
        case 0..<5:
            (type, data) = (
                "RegisterUser", ["userId": id("u", 6), "name": pick(["Ann", " Bo ", ""]), "email": email()]
            )
        case 5..<7: (type, data) = ("UpdateUserProfile", ["userId": id("u", 6), "email": email()])
        case 7..<9:
            (type, data) = (
                "ChangeSubscription", ["userId": id("u", 6), "subscription": pick(["free", "premium", "gold"])]
            )
        case 9: (type, data) = ("DeleteUser", ["userId": id("u", 6)])
        case 10..<13:
            (type, data) = (
                "CreatePost", ["postId": id("post", 3), "authorId": id("u", 6), "title": "T", "content": "C"]
            )
        case 13..<15: (type, data) = ("EditPost", ["postId": id("post", 3), "title": pick(["T", "U"])])
        case 15: (type, data) = ("DeletePost", ["postId": id("post", 3)])
        case 16..<21:
            (type, data) = (
                "AddProduct",
                [
                    "productId": id("p", 4), "name": "Tea", "price": pick(["0.10", "2.5", "-1"]), "category": "food",
                    "stock": .int(Int.random(in: 0...3, using: &generator)),
                ]
            )
        case 21..<23: (type, data) = ("UpdateProduct", ["productId": id("p", 4), "price": pick(["0.10", "3.00"])])
        case 23..<27:
            (type, data) = (
                "RestockProduct", ["productId": id("p", 4), "quantity": .int(Int.random(in: 0...3, using: &generator))]
            )
        case 27: (type, data) = ("RemoveProduct", ["productId": id("p", 4)])
        case 28..<38:
            (type, data) = (
                "PurchaseProduct",
                [
                    "orderId": id("o", 60), "userId": id("u", 6), "productId": id("p", 4),
                    "quantity": .int(Int.random(in: 1...3, using: &generator)),
                ]
            )
        default: (type, data) = ("Nonsense", [:])
        }
        let expected: ExpectedVersion =
            Int.random(in: 0..<8, using: &generator) == 0 ? .exactly(Int.random(in: 1...3, using: &generator)) : .any
        return CommandRequest(commandId: commandId, type: type, data: data, expectedVersion: expected)
    }
}
