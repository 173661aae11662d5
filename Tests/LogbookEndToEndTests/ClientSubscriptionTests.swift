import Glibc
import LogbookApplication
import LogbookClient
import LogbookJSON
import LogbookWire
import Testing

/// `LogbookClient.subscribe` against a real worker: every event once, in order, across a
/// worker restart.
@Suite("End to end: the Swift client's subscription", .serialized)
struct ClientSubscriptionTests {
    @Test("a subscription sees every event of its topics once, in order, before and after a worker restart")
    func acrossRestart() async throws {
        let cluster = try await ServiceCluster.started()
        let client = try cluster.client()
        defer { client.close() }
        for index in 1...5 {
            _ = try await client.send(
                type: "AddProduct",
                data: [
                    "productId": .string("p\(index)"), "name": "Tea", "price": "1.00", "category": "food", "stock": 5,
                ])
        }
        _ = try await client.send(
            type: "RegisterUser", data: ["userId": "u1", "name": "Ann", "email": "a@example.com"])

        // Join late (five products already in the log), then keep going across a restart.
        var iterator = client.subscribe(topics: [.products], from: 1).makeAsyncIterator()
        var seen: [RecordedEvent] = []
        for _ in 1...5 { seen.append(try #require(try await iterator.next())) }

        cluster.stopWorker(SIGKILL)
        try await cluster.startWorker()
        let restarted = try cluster.client()
        defer { restarted.close() }
        for index in 6...9 {
            _ = try await restarted.send(
                type: "AddProduct",
                data: [
                    "productId": .string("p\(index)"), "name": "Tea", "price": "1.00", "category": "food", "stock": 5,
                ])
            _ = try await restarted.send(
                type: "PurchaseProduct",
                data: [
                    "orderId": .string("o\(index)"), "userId": "u1", "productId": .string("p\(index)"), "quantity": 1,
                ])
        }
        for _ in 1...8 { seen.append(try #require(try await iterator.next())) }

        let page = try await restarted.readLog(from: 1, limit: 1_000, topics: ["products"])
        #expect(seen.map(\.position) == page.events.map(\.position))
        #expect(seen.map(\.eventId) == page.events.map(\.eventId))
        #expect(Set(seen.map(\.position)).count == 13)
        #expect(seen.allSatisfy { $0.stream.hasPrefix("product-") })
    }
}
