import Foundation
import Glibc
import LogbookApplication
import LogbookClient
import LogbookJSON
import Testing

/// `logbook subscribe` follows like `tail -f`: through worker restarts it waits, says so on
/// stderr, and goes on without a hole or a repeat.
@Suite("End to end: subscribe follows through worker restarts", .serialized)
struct SubscribeFollowTests {
    @Test("a subscriber outlives two kills and restarts of the worker; its output has no gap and no repeat")
    func followsThroughRestarts() async throws {
        let cluster = try ServiceCluster()
        try await cluster.startWorker()
        let client = try cluster.client()
        defer { client.close() }
        for index in 0..<5 { _ = try await client.send(type: "AddProduct", data: Fixture.product("first\(index)")) }
        // Short attempts, so that the old default (3 attempts) would have given up long before.
        let subscriber = try cluster.background(["subscribe", "products", "--from", "1", "--timeout-ms", "300"])
        defer { kill(subscriber.pid, SIGKILL) }
        #expect(await subscriber.waitForLines(5), "\(subscriber.stderr)")
        var sent = 5
        for round in 1...2 {
            cluster.stopWorker(SIGKILL)
            let waited = await eventually(within: patience) {
                subscriber.stderr.components(separatedBy: "waiting for the log").count - 1 >= 3 * round
            }
            #expect(waited, "subscribe did not say it waits: \(subscriber.stderr)")
            #expect(subscriber.process.isRunning, "subscribe gave up: \(subscriber.stderr)")
            try await cluster.startWorker()
            for index in 0..<4 {
                _ = try await client.send(type: "AddProduct", data: Fixture.product("round\(round)-\(index)"))
            }
            sent += 4
            #expect(await subscriber.waitForLines(sent, within: patience), "\(subscriber.stderr)")
        }
        #expect(subscriber.process.isRunning, "subscribe ended: \(subscriber.stderr)")
        #expect(subscriber.stderr.contains("answers again; following"), "\(subscriber.stderr)")
        let products = try await cluster.wholeLog().filter { $0.category == "product" }
        #expect(products.count == sent)
        #expect(try subscriber.jsonLines().map { JSONValue.object($0) } == products.map(\.envelope))
    }
}
