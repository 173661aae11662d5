import LogbookApplication
import LogbookJSON
import LogbookMemory
import Testing

/// `ReadLog`'s use case: pages, `next` and `head`, topics, and the byte budget.
@Suite("LogReader")
struct LogReaderTests {
    /// A log of users (each two events: the user and its email claim) and products.
    static func harness(users: Int, products: Int) -> HandlerHarness {
        let harness = HandlerHarness()
        for index in 0..<users {
            harness.send("u\(index)", "RegisterUser", Body.user("u\(index)", email: "u\(index)@example.com"))
        }
        for index in 0..<products {
            harness.send("p\(index)", "AddProduct", Body.product("p\(index)"))
        }
        return harness
    }

    @Test("a short page ends past the head; a full page ends after its last event")
    func nextAndHead() throws {
        let harness = Self.harness(users: 2, products: 3)  // positions 1–4 users and claims, 5–7 products
        let reader = LogReader(store: harness.store)
        let full = try reader.read(from: 1, limit: 3, categories: nil)
        #expect(full.events.map(\.position) == [1, 2, 3])
        #expect(full.next == 4)
        #expect(full.head == 7)
        let short = try reader.read(from: 4, limit: 10, categories: nil)
        #expect(short.events.map(\.position) == [4, 5, 6, 7])
        #expect(short.next == 8)
        let products = try reader.read(from: 1, limit: 2, categories: ["product"])
        #expect(products.events.map(\.position) == [5, 6])
        #expect(products.next == 7)
        let rest = try reader.read(from: 7, limit: 2, categories: ["product"])
        #expect(rest.events.map(\.position) == [7])
        #expect(rest.next == 8)
        let beyond = try reader.read(from: 50, limit: 2, categories: nil)
        #expect(beyond.events.isEmpty)
        #expect(beyond.next == 50)
    }

    @Test("a page of large events stops at the byte budget, never splits an event, and does not claim the head")
    func byteBudget() throws {
        let harness = HandlerHarness()
        let content = String(repeating: "y", count: 50_000)
        for index in 0..<2 {
            harness.send("u\(index)", "RegisterUser", Body.user("u\(index)", email: "u\(index)@example.com"))
        }
        // 200 posts of 50,000 characters: about 10 MB of payload, over twice the budget.
        for index in 0..<200 {
            harness.send(
                "post\(index)", "CreatePost",
                ["postId": .string("post\(index)"), "authorId": "u0", "title": "Long", "content": .string(content)])
        }
        let reader = LogReader(store: harness.store)
        var next: Int64 = 1
        var seen: [Int64] = []
        var pages = 0
        while true {
            let page = try reader.read(from: next, limit: 10_000, categories: nil)
            pages += 1
            let bytes = page.events.reduce(0) { $0 + $1.data.utf8.count }
            #expect(bytes <= LogReader.pageByteBudget)
            #expect(!page.events.isEmpty || page.next > page.head)
            seen += page.events.map(\.position)
            if page.next > page.head { break }
            #expect(page.next == (page.events.last?.position ?? 0) + 1)
            next = page.next
        }
        #expect(seen == Array(1...204))
        #expect(pages >= 3)
    }

    @Test("the budget counts payloads as stored (escaped), so escape-heavy events cut a page too")
    func escapedPayloads() throws {
        let harness = HandlerHarness()
        harness.send("u0", "RegisterUser", Body.user("u0", email: "u0@example.com"))
        let content = String(repeating: "\u{1}", count: 50_000)
        for index in 0..<20 {
            harness.send(
                "post\(index)", "CreatePost",
                ["postId": .string("post\(index)"), "authorId": "u0", "title": "Odd", "content": .string(content)])
        }
        let reader = LogReader(store: harness.store)
        let page = try reader.read(from: 3, limit: 10_000, categories: nil)
        #expect(!page.events.isEmpty)
        #expect(page.next == (page.events.last?.position ?? 0) + 1)
        #expect(page.next <= page.head)
    }
}
