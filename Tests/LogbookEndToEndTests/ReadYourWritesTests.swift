import LogbookApplication
import LogbookClient
import LogbookJSON
import Testing

/// `minPosition` for commands whose last event is on no feed topic (an email claim).
@Suite("End to end: read-your-writes after a registration", .serialized)
struct ReadYourWritesTests {
    @Test("a query waiting for a registration's position makes the query process read the log for it")
    func registrationPosition() async throws {
        let cluster = try ServiceCluster()
        try await cluster.startWorker()
        // The quiet feed's own log read is an hour away, longer than any query may wait: only the
        // waiting query's request can make the query process read the log for the email claim.
        try await cluster.startQuery(environment: ["LOGBOOK_IDLE_CATCH_UP_MS": "3600000"])
        let client = try cluster.client(timeout: .seconds(90), attempts: 1)
        defer { client.close() }
        for round in 0..<3 {
            let head = try await client.readLog(from: 1, limit: 1).head
            // Park a query for the position the registration will get (its last event is
            // the email claim, which no topic carries), then register.
            async let answer = client.query(
                type: "GetUser", data: ["userId": .string("u\(round)")], minPosition: head + 2, timeoutMs: 60_000)
            let parked = await eventually(within: patience) {
                (try? await client.status(of: .queries))?["queriesWaiting"] == .int(1)
            }
            #expect(parked, "the query process never reported the query as waiting")
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

    @Test("run query refuses an idle catch-up time that is not a whole number of milliseconds")
    func idleCatchUpSetting() async throws {
        let result = try await runLogbook(["run", "query", "--idle-catch-up-ms", "0"])
        #expect(result.status == 2)
        #expect(
            result.stderr.hasPrefix(
                "logbook: error: run: --idle-catch-up-ms must be a whole number of milliseconds from 1 to 86400000"),
            "\(result.stderr)")
    }
}
