import LogbookJSON
import LogbookWire
import Testing

/// Queries with `minPosition` against a worker and a query process running in the test
/// process: one beyond the head waits and is answered once a command gets there; one whose
/// position never comes is answered `timeout`.
@Suite("Query process: queries waiting for a position", .serialized)
struct ParkedQueryServiceTests {
    @Test("a query with minPosition beyond the head waits, and is answered once a command reaches it")
    func answeredWhenPositionArrives() throws {
        let rig = try ServiceRig()
        defer { rig.stop() }
        let queries = try rig.queriesClient()
        let observer = try rig.queriesClient()
        let commands = try rig.commandsClient()

        // RegisterUser writes the user (1) and its email claim (2), which no feed topic carries.
        try queries.send(Fixture.getUser("u1", queryId: "q1", minPosition: 2, timeoutMs: 60_000))
        let parked = try eventually({ try observer.queryStatus() }, until: { $0.queriesWaiting == 1 })
        #expect(parked.queriesWaiting == 1)
        #expect(parked.queriesAnswered == 0)
        #expect(try !queries.hasReply())

        let accepted = try commands.request(Fixture.registerUser("u1", commandId: "c1"))
        #expect(accepted["position"] == 2)
        let reply = try queries.receive()
        #expect(reply["id"] == "q1")
        #expect(reply["ok"] == true, "\(reply)")
        #expect((reply["position"]?.intValue ?? 0) >= 2)
        #expect(reply["result"]?.objectValue?["userId"] == "u1")

        let after = try observer.queryStatus()
        #expect(after.queriesWaiting == 0)
        #expect(after.queriesAnswered == 1)
    }

    @Test("a query whose position never comes is answered timeout, naming both positions")
    func timesOut() throws {
        let rig = try ServiceRig()
        defer { rig.stop() }
        let queries = try rig.queriesClient()
        let observer = try rig.queriesClient()

        try queries.send(Fixture.getUser("u1", queryId: "q1", minPosition: 1_000, timeoutMs: 300))
        let reply = try queries.receive()
        #expect(reply["id"] == "q1")
        #expect(reply["ok"] == false)
        let error = try #require(reply["error"]?.objectValue)
        #expect(error["code"] == "timeout")
        #expect(error["message"] == "the read models reached position 0, not 1000, within 300 ms")
        #expect(error["details"] == ["minPosition": 1_000, "position": 0])

        let after = try observer.queryStatus()
        #expect(after.queriesWaiting == 0)
        #expect(after.queriesAnswered == 0)
    }
}
