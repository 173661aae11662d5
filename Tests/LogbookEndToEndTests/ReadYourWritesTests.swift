import LogbookApplication
import LogbookClient
import LogbookJSON
import Testing

/// `minPosition` for commands whose last event is on no feed topic (an email claim).
@Suite("End to end: read-your-writes after a registration", .serialized)
struct ReadYourWritesTests {
    @Test("a query waiting for a registration's position is answered from the log, not after an idle second")
    func registrationPosition() async throws {
        let cluster = try await ServiceCluster.started()
        let client = try cluster.client()
        defer { client.close() }
        for round in 0..<3 {
            let head = try await client.readLog(from: 1, limit: 1).head
            // Park a query for the position the registration will get (its last event is
            // the email claim, which no topic carries), then register.
            async let answer = client.query(
                type: "GetUser", data: ["userId": .string("u\(round)")], minPosition: head + 2, timeoutMs: 800)
            try await Task.sleep(for: .milliseconds(100))
            let receipt = try await client.send(
                type: "RegisterUser",
                data: ["userId": .string("u\(round)"), "name": "Ann", "email": .string("u\(round)@example.com")])
            #expect(receipt.position == head + 2)
            #expect(receipt.events.last?.stream.hasPrefix("email-") == true)
            let answered = try await answer
            #expect(answered.position >= receipt.position)
            #expect(answered.result.objectValue?["userId"] == .string("u\(round)"))
        }
    }
}
