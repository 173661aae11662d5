import Foundation
import LogbookApplication
import LogbookJSON
import LogbookServer
import LogbookTestSupport
import LogbookZMQ
import Testing

/// The groups process commits on a thread of its own: while a commit is under way its loop
/// goes on delivering the streams that wait for nothing, and the acknowledgement the commit
/// carries is confirmed only once it is durable.
@Suite("Groups commit thread")
struct GroupCommitThreadTests {
    @Test func anAckIsConfirmedOnlyOnceDurableWhileAnotherStreamIsDelivered() throws {
        let rig = try ServiceRig()
        defer { rig.stop() }
        let endpoints = ServiceEndpoints(
            commands: rig.endpoints.commands, feed: rig.endpoints.feed, queries: rig.endpoints.queries,
            log: rig.endpoints.log, groups: "ipc://\(rig.directory.path)/groups")
        let store = HeldCommitStore()
        let groups = try GroupsService(
            endpoints: endpoints, openStore: { () throws(GroupStoreError) -> any GroupStore in store },
            clock: StepClock(), diagnostics: Diagnostics(process: "test", threshold: .error, clock: StepClock()))
        try groups.start()
        defer { groups.stop() }
        // Before the stop, should the test end while a commit is held.
        defer { store.release() }
        let commands = try rig.commandsClient()
        for user in ["ann", "bob"] {
            #expect(try commands.request(Fixture.registerUser(user, commandId: "register-\(user)"))["ok"] == true)
        }
        let admin = try DealerClient(rig.context, endpoints.groups)
        let created = try admin.request([
            "id": "create", "type": "CreateGroup", "group": "mailer", "topics": ["users"], "maxInFlight": 1,
        ])
        #expect(created["ok"] == true)
        let member = try DealerClient(rig.context, endpoints.groups)
        #expect(try member.request(["id": "join", "type": "Join", "group": "mailer"])["ok"] == true)
        let first = try member.receive()
        #expect(first["type"] == "Deliver")
        let position = try #require(first["position"]?.intValue)

        store.holdNextCommit()
        try member.send(["id": "ack", "type": "Ack", "group": "mailer", "positions": [.int(position)]])
        store.waitUntilHeld()
        // A commit is held: the member, whose ack freed its only place, is handed the other
        // stream's event, and the ack's reply has not gone before it.
        let second = try member.receive()
        #expect(second["type"] == "Deliver")
        #expect(second["event"]?.objectValue?["stream"] != first["event"]?.objectValue?["stream"])
        #expect(store.isHolding)
        store.release()
        let confirmed = try member.receive()
        #expect(confirmed["id"] == "ack")
        #expect(confirmed["result"]?.objectValue?["acked"] == .array([.int(position)]))
        // Durable: the checkpoint passed the acked event.
        let checkpoints = try store.groups().map(\.checkpoint)
        #expect(checkpoints.count == 1 && checkpoints.allSatisfy { $0 >= Int64(position) })
    }
}
