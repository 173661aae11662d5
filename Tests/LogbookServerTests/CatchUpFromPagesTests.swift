import Foundation
import LogbookJSON
import LogbookSQLite
import LogbookTestSupport
import LogbookWire
import LogbookZMQ
import Testing

@testable import LogbookServer

/// A query process that starts behind the log catches up page by page, applying each page
/// from the bytes it came in, and ends up holding what a query process that followed the
/// same log live holds.
@Suite("Query process: catching up from pages", .serialized)
struct CatchUpFromPagesTests {
    @Test("a query process started behind catches up from pages to what one that followed live holds")
    func catchUpMatchesLive() throws {
        let rig = try ServiceRig()
        defer { rig.stop() }
        let commands = try rig.commandsClient()
        let queries = try rig.queriesClient()
        // 60 events: per index a user, its email claim (an internal category) and a product.
        for index in 0..<20 {
            _ = try commands.request(Fixture.registerUser("u\(index)", commandId: "cu\(index)"))
            _ = try commands.request(Fixture.addProduct("p\(index)", commandId: "cp\(index)"))
        }
        let live = try eventually({ try queries.queryStatus() }, until: { $0.checkpoint == 60 })
        #expect(live.checkpoint == 60)

        // A second query process on the same worker, with read models of its own, reading
        // pages of 7 events: pages that start and end on internal events too.
        let late = rig.directory.appendingPathComponent("late")
        try FileManager.default.createDirectory(at: late, withIntermediateDirectories: true)
        let endpoints = ServiceEndpoints(
            commands: rig.endpoints.commands, feed: rig.endpoints.feed,
            queries: "ipc://\(rig.directory.path)/late-queries", log: rig.endpoints.log)
        let service = try QueryService(
            context: try ZMQContext(), endpoints: endpoints,
            generations: SQLiteReadModelGenerations(directory: late.path), clock: StepClock(),
            diagnostics: Diagnostics(process: "test", threshold: .error, clock: StepClock()), security: nil,
            clientKeys: nil, ownsContext: true, catchUpPageSize: 7)
        try service.start()
        defer { service.stop() }
        let lateQueries = try DealerClient(rig.context, endpoints.queries)
        let caughtUp = try eventually({ try lateQueries.queryStatus() }, until: { $0.checkpoint == 60 })
        #expect(caughtUp.checkpoint == 60)
        #expect(caughtUp.readModels == live.readModels)
        // Both count the events of the feed's topics only.
        #expect(caughtUp.eventsApplied == 40)
        #expect(live.eventsApplied == 40)
        for index in 0..<20 {
            let product = Fixture.getProduct("p\(index)", queryId: "qp\(index)")
            #expect(try lateQueries.request(product)["result"] == (try queries.request(product)["result"]))
            let user = Fixture.getUser("u\(index)", queryId: "qu\(index)")
            #expect(try lateQueries.request(user)["result"] == (try queries.request(user)["result"]))
        }
    }
}
