import Foundation
import Glibc
import LogbookApplication
import LogbookClient
import LogbookTestSupport
import Testing

/// SIGTERM stops a worker cleanly: with commands in flight from many clients it exits 0,
/// and every command the log holds was answered (nothing committed goes unreplied).
@Suite("End to end: a clean stop", .serialized)
struct CleanStopTests {
    @Test("SIGTERM under load: exit 0, and every command in the log got its reply")
    func sigtermUnderLoad() async throws {
        let cluster = try ServiceCluster()
        try await cluster.startWorker()
        let acknowledged = Shared(Set<String>())
        let senders = Task {
            await withTaskGroup(of: Void.self) { group in
                for sender in 0..<48 {
                    group.addTask {
                        // One attempt, long enough that a reply the worker sends during its stop is
                        // always received (on a loaded machine 3 s once was not): a command the
                        // log holds without a reply is then the worker's fault only.
                        guard let client = try? cluster.client(timeout: .seconds(15), attempts: 1) else { return }
                        defer { client.close() }
                        for index in 0..<100_000 {
                            let id = "term-\(sender)-\(index)"
                            guard
                                (try? await client.send(
                                    type: "AddProduct", data: Fixture.product(id), commandId: id)) != nil
                            else { return }
                            acknowledged.update { $0.insert(id) }
                        }
                    }
                }
            }
        }
        let loaded = await eventually(within: patience) { acknowledged.value.count >= 500 }
        #expect(loaded, "only \(acknowledged.value.count) commands were acknowledged")
        #expect(cluster.stopWorker(SIGTERM) == 0, "\(cluster.stderr(of: "worker"))")
        // What the stopped worker committed ends here: later positions are the next worker's.
        let headRow = RawSQLResult.firstRow(path: cluster.eventLogPath, sql: "SELECT max(position) FROM events")
        let stoppedHead = Int64(headRow.first ?? "") ?? 0
        await senders.value

        try await cluster.startWorker()
        let log = try await cluster.wholeLog()
        let logged = Set(log.map(\.metadata.commandId))
        let committedByStopped = Set(log.filter { $0.position <= stoppedHead }.map(\.metadata.commandId))
        let unanswered = committedByStopped.subtracting(acknowledged.value)
        // Every command the stopped worker committed got its reply (later positions would be
        // the next worker's, from requests the stopped one never read).
        #expect(unanswered.isEmpty, "\(unanswered.count) committed commands got no reply: \(unanswered.prefix(5))")
        #expect(acknowledged.value.isSubset(of: logged))
    }
}
