import LogbookJSON
import LogbookSQLite
import LogbookWire
import Synchronization
import Testing

/// `Rebuild` against a query process running in the test process: it fills a new
/// generation and switches to it while queries keep being answered; a retry of the same
/// request id joins the rebuild it started instead of starting another.
@Suite("Query process: Rebuild", .serialized)
struct RebuildServiceTests {
    @Test("a Rebuild switches generation while queries keep answering; a retry of its id joins it")
    func rebuildSwitchesAndRetryJoins() throws {
        // The query process hands freed memory back once per rebuild, before its bulk load.
        let releases = Atomic<Int>(0)
        let rig = try ServiceRig(releaseFreeMemory: { releases.add(1, ordering: .relaxed) })
        defer { rig.stop() }
        let commands = try rig.commandsClient()
        let queries = try rig.queriesClient()
        _ = try commands.request(Fixture.registerUser("u1", commandId: "c1"))  // 1, 2
        _ = try commands.request(Fixture.addProduct("p1", commandId: "c2"))  // 3
        _ = try commands.request(Fixture.addProduct("p2", commandId: "c3"))  // 4
        let before = try eventually({ try queries.queryStatus() }, until: { $0.checkpoint == 4 })
        #expect(before.generation == 1)
        #expect(releases.load(ordering: .relaxed) == 0)
        let answer = try queries.request(Fixture.getProduct("p1", queryId: "q1"))
        #expect(answer["ok"] == true)

        let started = try QueryStatus(json: try #require(try queries.request(Fixture.rebuild("r1"))["result"]))
        #expect(started.rebuild != .idle || started.generation == 2, "\(started)")
        // Queries are answered meanwhile, from whichever generation is current.
        #expect(try queries.request(Fixture.getProduct("p1", queryId: "q2"))["result"] == answer["result"])

        let switched = try eventually(
            { try queries.queryStatus() }, until: { $0.generation == 2 && $0.rebuild == .idle })
        #expect(switched.generation == 2)
        #expect(switched.rebuild == .idle)
        #expect(switched.checkpoint == 4)
        #expect(switched.readModels == before.readModels)
        #expect(releases.load(ordering: .relaxed) == 1)
        #expect(try queries.request(Fixture.getProduct("p1", queryId: "q3"))["result"] == answer["result"])
        let files = try eventually({ rig.generations.existing() }, until: { $0 == [2] })
        #expect(files == [2])

        // The client's retry of r1, on a fresh socket: it started a rebuild already, so it starts none.
        let retry = try rig.queriesClient()
        let joined = try QueryStatus(json: try #require(try retry.request(Fixture.rebuild("r1"))["result"]))
        #expect(joined.rebuild == .idle)
        #expect(joined.generation == 2)

        // The new generation follows the feed.
        let later = try commands.request(Fixture.addProduct("p3", commandId: "c4"))
        let position = try #require(later["position"]?.intValue)
        let fresh = try queries.request(
            ["id": "q4", "type": "GetProduct", "data": ["productId": "p3"], "minPosition": .int(position)])
        #expect(fresh["ok"] == true, "\(fresh)")

        // Another id starts another rebuild.
        let second = try QueryStatus(json: try #require(try retry.request(Fixture.rebuild("r2"))["result"]))
        #expect(second.rebuild != .idle || second.generation == 3, "\(second)")
        let third = try eventually({ try queries.queryStatus() }, until: { $0.generation == 3 && $0.rebuild == .idle })
        #expect(third.generation == 3)
        #expect(third.checkpoint == 5)
        #expect(releases.load(ordering: .relaxed) == 2)
    }
}
